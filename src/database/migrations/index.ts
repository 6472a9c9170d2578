import { InitialSchema1763800000000 } from './1763800000000-InitialSchema';
import { ReadIndexes1763904000000 } from './1763904000000-ReadIndexes';
import { SignInThrottle1764200000000 } from './1764200000000-SignInThrottle';
import { UserSession1764500000000 } from './1764500000000-UserSession';

/** Every migration, in order. A new migration is a new timestamped file added here. */
export const MIGRATIONS = [InitialSchema1763800000000, ReadIndexes1763904000000, SignInThrottle1764200000000, UserSession1764500000000];

import { InitialSchema1763800000000 } from './1763800000000-InitialSchema';

/** Every migration, in order. A new migration is a new timestamped file added here. */
export const MIGRATIONS = [InitialSchema1763800000000];

import { InitialSchema1763800000000 } from './1763800000000-InitialSchema';
import { ReadIndexes1763904000000 } from './1763904000000-ReadIndexes';
import { SignInThrottle1764200000000 } from './1764200000000-SignInThrottle';
import { AuditSearchText1764400000000 } from './1764400000000-AuditSearchText';
import { AppendOnlyAutovacuum1764400000001 } from './1764400000001-AppendOnlyAutovacuum';
import { UserSession1764500000000 } from './1764500000000-UserSession';
import { AnonymousLogout1765000000000 } from './1765000000000-AnonymousLogout';
import { ArchiverCounterModelName1765500000000 } from './1765500000000-ArchiverCounterModelName';
import { ArchiverWarningMinute1765500000001 } from './1765500000001-ArchiverWarningMinute';
import { TamperEvidentAudit1766000000000 } from './1766000000000-TamperEvidentAudit';
import { PartitionTelemetry1766100000000 } from './1766100000000-PartitionTelemetry';
import { PartitionAudit1766100000001 } from './1766100000001-PartitionAudit';
import { ApiKeyLastUsedUserAgent1766500000000 } from './1766500000000-ApiKeyLastUsedUserAgent';
import { UserPasskey1767200000000 } from './1767200000000-UserPasskey';
import { SecuritySink1767100000000 } from './1767100000000-SecuritySink';
import { AdminChange1767000000000 } from './1767000000000-AdminChange';
import { AdminChangeSearchText1767000000001 } from './1767000000001-AdminChangeSearchText';
import { AdminChangeTruncate1767300000000 } from './1767300000000-AdminChangeTruncate';
import { NoInheritedRows1767500000000 } from './1767500000000-NoInheritedRows';
import { ServiceChangeMark1767800000000 } from './1767800000000-ServiceChangeMark';
import { PendingHashes1768000000000 } from './1768000000000-PendingHashes';

/** Every migration, in order. A new migration is a new timestamped file added here. */
export const MIGRATIONS = [InitialSchema1763800000000, ReadIndexes1763904000000, SignInThrottle1764200000000, AuditSearchText1764400000000, AppendOnlyAutovacuum1764400000001, UserSession1764500000000, AnonymousLogout1765000000000, ArchiverCounterModelName1765500000000, ArchiverWarningMinute1765500000001, TamperEvidentAudit1766000000000, PartitionTelemetry1766100000000, PartitionAudit1766100000001, ApiKeyLastUsedUserAgent1766500000000, AdminChange1767000000000, AdminChangeSearchText1767000000001, SecuritySink1767100000000, UserPasskey1767200000000, AdminChangeTruncate1767300000000, NoInheritedRows1767500000000, ServiceChangeMark1767800000000, PendingHashes1768000000000];

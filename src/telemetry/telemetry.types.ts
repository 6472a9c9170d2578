import { enumNames } from '../common/enum-names';

/** Archiver stages (service.md 4.3): the StageId of the archiver tables. */
export enum ArchiverStage {
  BuildArchiveJson = 1,
  CaseCreationDispatch = 2,
  RdbmsArchiveWrite = 3,
  BulkCopyArchiveBuffer = 4,
}

/** Case creation stages (service.md 4.3): the StageId of the case creation tables. */
export enum CaseCreationStage {
  ExistingCasePriorityLookup = 1,
  WorkflowStatusLookupAndPersist = 2,
  Notification = 3,
  HttpEndpoint = 4,
}

export const ARCHIVER_STAGE_NAMES: Record<number, string> = enumNames(ArchiverStage);

export const CASE_CREATION_STAGE_NAMES: Record<number, string> = enumNames(CaseCreationStage);

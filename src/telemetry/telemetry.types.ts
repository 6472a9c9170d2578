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

// Re-exported only for capture-queues/capture-flusher.service.ts until its split (issue 23) imports
// the queues from their one definition; everything else imports capture-queues/capture-queue-id.
export { CaptureQueueId } from '../capture-queues/capture-queue-id';

export const ARCHIVER_STAGE_NAMES: Record<number, string> = {
  1: 'BuildArchiveJson',
  2: 'CaseCreationDispatch',
  3: 'RdbmsArchiveWrite',
  4: 'BulkCopyArchiveBuffer',
};

export const CASE_CREATION_STAGE_NAMES: Record<number, string> = {
  1: 'ExistingCasePriorityLookup',
  2: 'WorkflowStatusLookupAndPersist',
  3: 'Notification',
  4: 'HttpEndpoint',
};

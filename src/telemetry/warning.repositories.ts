import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { FlushedTableRepository } from '../database/bulk-insert';
import { ArchiverWarning, CaseCreationWarning, ModelInvokeWarning } from './warning.entities';

/** ArchiverWarning: written by the capture flush, read by the read engine. */
@Injectable()
export class ArchiverWarningRepository extends FlushedTableRepository<
  ArchiverWarning,
  'occurredDate' | 'entityAnalysisModelGuid' | 'entityAnalysisModelName' | 'entityAnalysisModelInstanceEntryGuid' | 'stageId' | 'durationMicroseconds'
> {
  constructor(@InjectRepository(ArchiverWarning) repository: Repository<ArchiverWarning>) {
    super(repository, ['occurredDate', 'entityAnalysisModelGuid', 'entityAnalysisModelName', 'entityAnalysisModelInstanceEntryGuid', 'stageId', 'durationMicroseconds']);
  }
}

/** CaseCreationWarning: written by the capture flush, read by the read engine. */
@Injectable()
export class CaseCreationWarningRepository extends FlushedTableRepository<
  CaseCreationWarning,
  'occurredDate' | 'caseWorkflowGuid' | 'caseWorkflowName' | 'caseKey' | 'caseKeyValue' | 'stageId' | 'destination' | 'durationMicroseconds'
> {
  constructor(@InjectRepository(CaseCreationWarning) repository: Repository<CaseCreationWarning>) {
    super(repository, ['occurredDate', 'caseWorkflowGuid', 'caseWorkflowName', 'caseKey', 'caseKeyValue', 'stageId', 'destination', 'durationMicroseconds']);
  }
}

/** ModelInvokeWarning: written by the capture flush, read by the read engine. */
@Injectable()
export class ModelInvokeWarningRepository extends FlushedTableRepository<
  ModelInvokeWarning,
  | 'occurredDate'
  | 'entityAnalysisModelGuid'
  | 'entityAnalysisModelName'
  | 'entityAnalysisModelInstanceEntryGuid'
  | 'message'
  | 'elapsedMicroseconds'
  | 'sinceLastEntryMicroseconds'
> {
  constructor(@InjectRepository(ModelInvokeWarning) repository: Repository<ModelInvokeWarning>) {
    super(repository, [
      'occurredDate',
      'entityAnalysisModelGuid',
      'entityAnalysisModelName',
      'entityAnalysisModelInstanceEntryGuid',
      'message',
      'elapsedMicroseconds',
      'sinceLastEntryMicroseconds',
    ]);
  }
}

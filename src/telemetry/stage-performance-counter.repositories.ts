import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { FlushedTableRepository } from '../database/bulk-insert';
import { ArchiverStagePerformanceCounter, CaseCreationStagePerformanceCounter } from './stage-performance-counter.entities';

/** ArchiverStagePerformanceCounter: written by the capture flush, read by the read engine. */
@Injectable()
export class ArchiverStagePerformanceCounterRepository extends FlushedTableRepository<
  ArchiverStagePerformanceCounter,
  'entityAnalysisModelGuid' | 'entityAnalysisModelName' | 'stageId' | 'totalMicroseconds' | 'minMicroseconds' | 'maxMicroseconds' | 'invokeCount'
> {
  constructor(@InjectRepository(ArchiverStagePerformanceCounter) repository: Repository<ArchiverStagePerformanceCounter>) {
    super(repository, ['entityAnalysisModelGuid', 'entityAnalysisModelName', 'stageId', 'totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount']);
  }
}

/** CaseCreationStagePerformanceCounter: written by the capture flush, read by the read engine. */
@Injectable()
export class CaseCreationStagePerformanceCounterRepository extends FlushedTableRepository<
  CaseCreationStagePerformanceCounter,
  'stageId' | 'totalMicroseconds' | 'minMicroseconds' | 'maxMicroseconds' | 'invokeCount'
> {
  constructor(@InjectRepository(CaseCreationStagePerformanceCounter) repository: Repository<CaseCreationStagePerformanceCounter>) {
    super(repository, ['stageId', 'totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount']);
  }
}

import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { FlushedTableRepository } from '../database/bulk-insert';
import { OpenTelemetryMetric } from './open-telemetry-metric.entity';

/** OpenTelemetryMetric: one row per series per flush, written by the capture flush, read by the read engine. */
@Injectable()
export class OpenTelemetryMetricRepository extends FlushedTableRepository<OpenTelemetryMetric, 'name' | 'tags' | 'count' | 'sum' | 'min' | 'max'> {
  constructor(@InjectRepository(OpenTelemetryMetric) repository: Repository<OpenTelemetryMetric>) {
    super(repository, ['name', 'tags', 'count', 'sum', 'min', 'max']);
  }
}

import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { Health } from './health.service';

/** GET /health/live and GET /health/ready (issue 11). */
@Module({ controllers: [HealthController], providers: [Health] })
export class HealthModule {}

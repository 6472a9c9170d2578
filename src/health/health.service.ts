import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Bus } from '../bus/bus';
import { withinDeadline } from '../common/deadline';
import { AppSettings, SETTINGS } from '../config/config.module';

/** A dependency the node needs to serve requests. */
export type HealthPart = 'database' | 'redis';

export interface Readiness {
  ready: boolean;
  /** The parts that are not ready, in a fixed order. */
  failing: HealthPart[];
}

/**
 * Readiness of this node: PostgreSQL answers a trivial statement within its deadline, and Redis,
 * when configured, is connected (both connections ready and answering the heartbeat). Concurrent
 * probes share one check, so a load balancer polling every node often costs one statement at a time.
 */
@Injectable()
export class Health {
  private checking: Promise<Readiness> | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: Bus,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  readiness(): Promise<Readiness> {
    this.checking ??= this.check().finally(() => (this.checking = null));
    return this.checking;
  }

  private async check(): Promise<Readiness> {
    const failing: HealthPart[] = [];
    if (!(await this.databaseAnswers())) failing.push('database');
    if (this.settings.redisConnectionString && !this.bus.connected) failing.push('redis');
    return { ready: failing.length === 0, failing };
  }

  /** SELECT 1 within the connect deadline (the pool's own deadlines and breaker apply too). */
  private async databaseAnswers(): Promise<boolean> {
    try {
      await withinDeadline(this.dataSource.query('SELECT 1'), this.settings.databaseConnectTimeoutMs);
      return true;
    } catch {
      return false;
    }
  }
}

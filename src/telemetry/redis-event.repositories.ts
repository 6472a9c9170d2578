import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { FlushedTableRepository } from '../database/bulk-insert';
import { RedisConnectionEvent, RedisSentinelEvent } from './redis-event.entities';

type RedisEventColumns = 'occurredDate' | 'eventName' | 'endpoint' | 'message';
const REDIS_EVENT_COLUMNS: RedisEventColumns[] = ['occurredDate', 'eventName', 'endpoint', 'message'];

/** RedisConnectionEvent: written by the capture flush, read by the read engine. */
@Injectable()
export class RedisConnectionEventRepository extends FlushedTableRepository<RedisConnectionEvent, RedisEventColumns> {
  constructor(@InjectRepository(RedisConnectionEvent) repository: Repository<RedisConnectionEvent>) {
    super(repository, REDIS_EVENT_COLUMNS);
  }
}

/** RedisSentinelEvent: written by the capture flush, read by the read engine. */
@Injectable()
export class RedisSentinelEventRepository extends FlushedTableRepository<RedisSentinelEvent, RedisEventColumns> {
  constructor(@InjectRepository(RedisSentinelEvent) repository: Repository<RedisSentinelEvent>) {
    super(repository, REDIS_EVENT_COLUMNS);
  }
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { Clock } from '../common/clock';
import { badRequest, notFound } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { uniqueOr409 } from '../users/registry-validation';
import { Changes, SinkChanges, SinkSnapshot } from './sink-changes';
import { SinkDeliverer } from './sink-deliverer.service';
import { parseSinkInput, SinkInput } from './sink-input';
import { MASK, SINK_FORMATS, SINK_TYPES, sinkFormatName, sinkTypeName, SinkFormat, SinkType } from './sink-kinds';
import { SinkSecretBox } from './sink-secret';
import { senderFor, TestReply } from './sink-sender';
import { SecuritySinkRepository, SinkRow, SinkValues } from './security-sink.repository';

/** A sink as every route answers it: its configuration (secrets never), and its delivery state. */
export interface SinkView {
  id: number;
  name: string;
  type: SinkType;
  url: string;
  format: SinkFormat;
  /** Whether a secret is set; the secret itself is never served. */
  secretSet: boolean;
  /** Header names, each value served as "****"; null when none. */
  headers: Record<string, string> | null;
  active: boolean;
  nextLeafIndex: number;
  behindLeaves: number;
  behindSeconds: number;
  lastDeliveredDate: Date | null;
  lastAttemptDate: Date | null;
  lastError: string | null;
  failingSince: Date | null;
  createdDate: Date;
  createdUser: string | null;
  /** For the page: paused, failing, behind, or delivering (up to date). */
  state: 'paused' | 'failing' | 'behind' | 'delivering';
}

/** The sink routes (contract 19): every change in one transaction, with its AdminChange Changes. */
@Injectable()
export class SecuritySinks {
  private readonly box: SinkSecretBox;
  private readonly logger = new Logger('SecuritySinks');

  constructor(
    private readonly sinks: SecuritySinkRepository,
    private readonly transactions: Transactions,
    private readonly deliverer: SinkDeliverer,
    private readonly clock: Clock,
    private readonly adminChanges: AdminChangeRecorder,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.box = new SinkSecretBox(settings.apiHmacKey);
  }

  async list(): Promise<SinkView[]> {
    return (await this.sinks.list()).map((row) => this.view(row));
  }

  async get(id: number): Promise<SinkView> {
    return this.view(await this.found(id));
  }

  async create(body: unknown, actor: AdminActor): Promise<SinkView> {
    const input = checked(parseSinkInput(body, true));
    const id = await this.transactions.run(async (tx) => {
      const treeSize = await this.sinks.latestTreeSize(tx);
      const start = input.startLeafIndex ?? treeSize;
      if (start > treeSize) throw badRequest(`startLeafIndex: at most the latest checkpoint's tree size, ${treeSize}.`, [{ field: 'startLeafIndex', message: `at most ${treeSize}` }]);
      const values = this.values(input, null);
      const id = await uniqueOr409(() => this.sinks.insert(values, start, this.clock.now(), actor.principal.userName, tx), `A sink named "${input.name}" exists.`);
      await this.changed(tx, actor, ActionTypeId.SinkCreated, id, input.name, SinkChanges.describe(null, this.snapshot({ ...values, nextLeafIndex: start })));
      return id;
    });
    void this.deliverer.claim();
    return this.get(id);
  }

  async update(id: number, body: unknown, actor: AdminActor): Promise<SinkView> {
    await this.transactions.run(async (tx) => {
      const before = await this.found(id, tx);
      const existingHeaders = this.headersOf(before);
      const input = checked(parseSinkInput(body, false, { secretSet: before.secret !== null, headers: existingHeaders }));
      const values = this.values(input, before);
      await uniqueOr409(() => this.sinks.update(id, values, tx), `A sink named "${input.name}" exists.`);
      const changes = SinkChanges.describe(this.snapshot(before), this.snapshot({ ...values, nextLeafIndex: before.nextLeafIndex }));
      await this.changed(tx, actor, ActionTypeId.SinkChanged, id, input.name, changes);
    });
    void this.deliverer.claim();
    return this.get(id);
  }

  async remove(id: number, actor: AdminActor): Promise<void> {
    await this.transactions.run(async (tx) => {
      const before = await this.found(id, tx);
      await this.sinks.delete(id, tx);
      await this.changed(tx, actor, ActionTypeId.SinkDeleted, id, before.name, SinkChanges.describe(this.snapshot(before), null));
    });
  }

  /** Sets the cursor back (contract 19): a value above it is a 400, checked in the same statement that sets it. */
  async replay(id: number, body: unknown, actor: AdminActor): Promise<SinkView> {
    const from = (body as { fromLeafIndex?: unknown } | null)?.fromLeafIndex;
    const extra = body && typeof body === 'object' ? Object.keys(body).filter((k) => k !== 'fromLeafIndex') : [];
    if (typeof from !== 'number' || !Number.isSafeInteger(from) || from < 0 || extra.length > 0) {
      throw badRequest('fromLeafIndex: a whole number, 0 or more.', [
        ...(typeof from !== 'number' || !Number.isSafeInteger(from) || from < 0 ? [{ field: 'fromLeafIndex', message: 'a whole number, 0 or more' }] : []),
        ...extra.map((field) => ({ field, message: 'unknown field' })),
      ]);
    }
    await this.transactions.run(async (tx) => {
      const before = await this.found(id, tx);
      const result = await this.sinks.replay(id, from, tx);
      if (!result) throw notFound(`No sink has id ${id}.`);
      if ('above' in result) throw badRequest(`fromLeafIndex: at most the sink's next leaf, ${result.above}.`, [{ field: 'fromLeafIndex', message: `at most ${result.above}` }]);
      const snapshot = this.snapshot(before);
      await this.changed(tx, actor, ActionTypeId.SinkReplayed, id, before.name, SinkChanges.describe({ ...snapshot, nextLeafIndex: result.before }, { ...snapshot, nextLeafIndex: from }));
    });
    return this.get(id);
  }

  /** Sends one test event outside the log, and answers what the receiver said. */
  async test(id: number): Promise<TestReply> {
    const sink = await this.found(id);
    const sender = senderFor(this.deliverer.openSink(sink), this.deliverer.source);
    try {
      return await sender.test(this.clock.now());
    } finally {
      sender.close();
    }
  }

  /**
   * Every sink change passes here, inside its transaction `tx` (contract 18 and 19): its AdminChange row,
   * ActionTypeId 15-18, TargetTable SecuritySink, TargetId `id`, TargetName `name`, Changes as
   * SinkChanges.describe computed them (the secret and every header value as "(secret)"). Written with
   * `tx`, so the change and its row commit together or not at all; a change that changes nothing writes none. The INFO line says the same (no secret
   * is in `changes`) for whoever reads the service's log rather than the table.
   */
  private async changed(tx: EntityManager, actor: AdminActor, action: ActionTypeId, id: number, name: string, changes: Changes): Promise<void> {
    // Like the registry's PUT, a change that changes nothing records nothing.
    if (Object.keys(changes).length === 0) return;
    const text = SinkChanges.text(changes);
    await this.adminChanges.record(tx, actor, { actionType: action, targetTable: 'SecuritySink', targetId: id, targetName: name, targetTenantRegistryId: null, changes: text });
    this.logger.log(`${ActionTypeId[action]} (${action}) SecuritySink ${id} ${JSON.stringify(name)} by ${JSON.stringify(actor.principal.userName)}: ${text}`);
  }

  private async found(id: number, tx?: EntityManager): Promise<SinkRow> {
    const row = await this.sinks.byId(id, tx);
    if (!row) throw notFound(`No sink has id ${id}.`);
    return row;
  }

  private headersOf(row: Pick<SinkRow, 'headers'>): Record<string, string> | null {
    return row.headers === null ? null : (JSON.parse(this.box.open('Headers', row.headers)) as Record<string, string>);
  }

  /** The stored values of a checked input; a PUT without secret or headers keeps the ones set. */
  private values(input: SinkInput, before: SinkRow | null): SinkValues {
    const keepSecret = input.secret === undefined && before !== null && sinkTypeName(before.typeId) === input.type;
    const keepHeaders = input.headers === undefined && before !== null && input.type === 'webhook';
    return {
      name: input.name,
      typeId: SINK_TYPES[input.type],
      url: input.url,
      formatId: SINK_FORMATS[input.format],
      secret: input.secret !== undefined ? this.box.seal('Secret', input.secret) : keepSecret ? before.secret : null,
      headers:
        input.headers !== undefined
          ? Object.keys(input.headers).length > 0
            ? this.box.seal('Headers', JSON.stringify(input.headers))
            : null
          : keepHeaders
            ? before.headers
            : null,
      active: input.active,
    };
  }

  private snapshot(values: Pick<SinkRow, 'name' | 'typeId' | 'url' | 'formatId' | 'secret' | 'headers' | 'active' | 'nextLeafIndex'>): SinkSnapshot {
    return {
      name: values.name,
      type: sinkTypeName(values.typeId),
      url: values.url,
      format: sinkFormatName(values.formatId),
      secret: values.secret === null ? null : this.box.open('Secret', values.secret),
      headers: this.headersOf(values),
      active: values.active,
      nextLeafIndex: values.nextLeafIndex,
    };
  }

  private view(row: SinkRow): SinkView {
    let headers: Record<string, string> | null = null;
    try {
      const clear = this.headersOf(row);
      headers = clear && Object.fromEntries(Object.keys(clear).map((name) => [name, MASK]));
    } catch {
      headers = null;
    }
    const behindLeaves = Math.max(0, row.treeSize - row.nextLeafIndex);
    const behindSeconds = row.oldestUnacknowledgedSealedDate ? Math.max(0, Math.floor((this.clock.nowMs() - row.oldestUnacknowledgedSealedDate.getTime()) / 1000)) : 0;
    return {
      id: row.id,
      name: row.name,
      type: sinkTypeName(row.typeId),
      url: row.url,
      format: sinkFormatName(row.formatId),
      secretSet: row.secret !== null,
      headers,
      active: row.active,
      nextLeafIndex: row.nextLeafIndex,
      behindLeaves,
      behindSeconds,
      lastDeliveredDate: row.lastDeliveredDate,
      lastAttemptDate: row.lastAttemptDate,
      lastError: row.lastError,
      failingSince: row.failingSince,
      createdDate: row.createdDate,
      createdUser: row.createdUser,
      state: !row.active ? 'paused' : row.failingSince ? 'failing' : behindLeaves > 0 ? 'behind' : 'delivering',
    };
  }
}

function checked(result: ReturnType<typeof parseSinkInput>): SinkInput {
  if ('problems' in result) {
    throw badRequest(`The sink is not valid: ${result.problems.map((p) => `${p.field || 'body'}: ${p.message}`).join('; ')}.`, result.problems);
  }
  return result.input;
}

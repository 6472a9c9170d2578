import { Inject, Injectable } from '@nestjs/common';
import { CAPTURE_TEXT, captureText, checkModelGuid } from '../capture-queues/capture-entry.checks';
import { CaptureQueues } from './capture-queues.service';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { TelemetryMetrics } from './telemetry-metrics';
import { ARCHIVER_STAGE_NAMES, ArchiverStage, CASE_CREATION_STAGE_NAMES, CaseCreationStage } from './telemetry.types';

/** The case a case-creation stage worked on, for its warning row. */
export interface CaseContext {
  caseWorkflowGuid: string | null;
  caseWorkflowName: string | null;
  caseKey: string | null;
  caseKeyValue: string | null;
  /** Notification destination or HTTP endpoint URL; kept only for those two stages. */
  destination?: string | null;
}

/** One trace point of a model invocation. */
export interface TracePoint {
  modelGuid: string;
  modelName: string | null;
  entryGuid: string | null;
  /** The trace point's message text. */
  message: string;
  /** Since the invocation started. */
  elapsedMicroseconds: number;
  /** Since the previous trace point. */
  sinceLastEntryMicroseconds: number;
  /** The model's "Logs: Warn Threshold Milliseconds". */
  warnThresholdMilliseconds: number;
  /** Stage tag of service.engine.stage.duration; defaults to the message. */
  stage?: string;
}

/**
 * The instrumentation API the platform's pipelines call (archiver, case creation, model invoke).
 * Every call is synchronous and in-memory: it updates the stage counters, records the OpenTelemetry
 * instruments (which also aggregate into the OpenTelemetryMetric queue) and, past a threshold,
 * increments the warn counter and enqueues the warning row at the same call site, so the counter and
 * the rows always agree. Nothing here waits on I/O; the once-a-minute flush writes it all.
 */
@Injectable()
export class PipelineTelemetry {
  constructor(
    private readonly queues: CaptureQueues,
    private readonly metrics: TelemetryMetrics,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /**
   * One archiver stage of one model. `entryGuid` is the invocation's entry; it is always null for
   * BulkCopyArchiveBuffer, which works on a batch rather than one invocation.
   */
  recordArchiverStage(modelGuid: string, modelName: string | null, stage: ArchiverStage, durationMicroseconds: number, entryGuid?: string | null): void {
    const stageName: string | undefined = ARCHIVER_STAGE_NAMES[stage];
    // Pipeline input: a counter or tag is only kept for a well-formed model GUID and a known stage; the
    // warning entry is checked (and dropped and counted if it cannot be written) by its queue.
    const model = checkModelGuid(modelGuid);
    if (model && stageName) {
      // The name is pipeline input: stripped of control characters and bounded like the warnings' names.
      const key = { modelGuid: model, modelName: captureText(modelName, CAPTURE_TEXT.name), stageId: stage };
      this.queues.archiverCounters.add(`${model}\u0000${stage}`, key, durationMicroseconds);
    }
    if (stageName) this.metrics.archiverStageDuration.record(durationMicroseconds / 1000, stageName);
    if (durationMicroseconds > this.settings.archiverWarnThresholdMilliseconds * 1000) {
      if (stageName) this.metrics.archiverWarnCount.record(1, stageName);
      this.queues.archiverWarnings.enqueue({
        occurredDate: this.clock.now(),
        modelGuid,
        modelName,
        entryGuid: stage === ArchiverStage.BulkCopyArchiveBuffer ? null : (entryGuid ?? null),
        stageId: stage,
        durationMicroseconds,
      });
    }
  }

  /** One case creation stage (global: one queue serves every model). */
  recordCaseCreationStage(stage: CaseCreationStage, durationMicroseconds: number, context: CaseContext): void {
    const stageName: string | undefined = CASE_CREATION_STAGE_NAMES[stage];
    if (stageName) {
      this.queues.caseCreationCounters.add(String(stage), { stageId: stage }, durationMicroseconds);
      this.metrics.caseCreationStageDuration.record(durationMicroseconds / 1000, stageName);
    }
    if (durationMicroseconds > this.settings.caseCreationWarnThresholdMilliseconds * 1000) {
      if (stageName) this.metrics.caseCreationWarnCount.record(1, stageName);
      const withDestination = stage === CaseCreationStage.Notification || stage === CaseCreationStage.HttpEndpoint;
      this.queues.caseCreationWarnings.enqueue({
        occurredDate: this.clock.now(),
        caseWorkflowGuid: context.caseWorkflowGuid,
        caseWorkflowName: context.caseWorkflowName,
        caseKey: context.caseKey,
        caseKeyValue: context.caseKeyValue,
        stageId: stage,
        destination: withDestination ? (context.destination ?? null) : null,
        durationMicroseconds,
      });
    }
  }

  /**
   * One trace point of a model invocation. When the gap since the previous trace point exceeds the
   * model's warn threshold, the logs warn counter is incremented and the ModelInvokeWarning row is
   * enqueued right here, together.
   */
  recordTracePoint(point: TracePoint): void {
    const stage = point.stage ?? point.message;
    this.metrics.invokeStageDuration.record(point.sinceLastEntryMicroseconds / 1000, stage);
    if (point.sinceLastEntryMicroseconds > point.warnThresholdMilliseconds * 1000) {
      this.metrics.logsWarnCount.record(1, stage);
      this.queues.modelInvokeWarnings.enqueue({
        occurredDate: this.clock.now(),
        modelGuid: point.modelGuid,
        modelName: point.modelName,
        entryGuid: point.entryGuid,
        message: point.message,
        elapsedMicroseconds: point.elapsedMicroseconds,
        sinceLastEntryMicroseconds: point.sinceLastEntryMicroseconds,
      });
    }
  }

  /** Starts timing one invocation; each `point()` measures since the start and since the last point. */
  startModelInvoke(modelGuid: string, modelName: string | null, entryGuid: string | null, warnThresholdMilliseconds: number): ModelInvokeTrace {
    return new ModelInvokeTrace(this, { modelGuid, modelName, entryGuid, warnThresholdMilliseconds });
  }
}

/** Times the trace points of one model invocation with the monotonic high-resolution clock. */
export class ModelInvokeTrace {
  private readonly start = process.hrtime.bigint();
  private last = this.start;

  constructor(
    private readonly telemetry: PipelineTelemetry,
    private readonly model: { modelGuid: string; modelName: string | null; entryGuid: string | null; warnThresholdMilliseconds: number },
  ) {}

  point(message: string, stage?: string): void {
    const now = process.hrtime.bigint();
    const elapsedMicroseconds = Number((now - this.start) / 1000n);
    const sinceLastEntryMicroseconds = Number((now - this.last) / 1000n);
    this.last = now;
    this.telemetry.recordTracePoint({ ...this.model, message, elapsedMicroseconds, sinceLastEntryMicroseconds, stage });
  }
}

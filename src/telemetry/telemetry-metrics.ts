import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { CAPTURE_TEXT, captureText } from '../capture-queues/capture-entry.checks';
import { CaptureQueues } from './capture-queues.service';
import { AppSettings, SETTINGS } from '../config/config.module';

/** Instrument names of service.md 6, exactly. */
export const METRIC_NAMES = {
  archiverStageDuration: 'service.engine.archiver.stage.duration',
  caseCreationStageDuration: 'service.engine.casecreation.stage.duration',
  invokeStageDuration: 'service.engine.stage.duration',
  archiverWarnCount: 'service.engine.archiver.warn.count',
  caseCreationWarnCount: 'service.engine.casecreation.warn.count',
  logsWarnCount: 'service.engine.logs.warn.count',
} as const;

/**
 * One instrument tagged by stage: every record goes to OpenTelemetry (exported over OTLP/HTTP when
 * EnableOpenTelemetry is set) and is also aggregated into the OpenTelemetryMetric capture queue, one
 * series per instrument and tags. Attribute objects and series keys are cached per stage, so a
 * record allocates nothing on the hot path.
 */
export class StageInstrument {
  /** Stage text as given (at most STAGE_TEXT long) → its cleaned tags; at most MAX_STAGES entries. */
  private readonly perStage = new Map<string, Tagged>();
  private readonly overflow: Tagged;

  constructor(
    readonly name: string,
    /** The OpenTelemetry instrument, or null when nothing exports (EnableOpenTelemetry unset). */
    private readonly sink: Histogram | Counter | null,
    private readonly queues: CaptureQueues,
  ) {
    this.overflow = { attributes: { stage: OVERFLOW_STAGE }, key: `${name}\u0000${OVERFLOW_STAGE}` };
  }

  /** A value that is not finite is not recorded (the OpenTelemetryMetric queue counts it as dropped). */
  record(value: number, stage: string): void {
    const tagged = this.tagged(stage);
    if (this.sink && Number.isFinite(value)) {
      if ('record' in this.sink) this.sink.record(value, tagged.attributes);
      else this.sink.add(value, tagged.attributes);
    }
    this.queues.metrics.record(tagged.key, this.name, tagged.attributes as Record<string, string>, value);
  }

  /**
   * The stage is caller text: cleaned (no control characters, NUL above all, which jsonb refuses) and
   * bounded before it becomes a tag; the cache of tags is bounded too, later stages sharing one
   * overflow series (as OpenTelemetry's own cardinality limit does).
   */
  private tagged(stage: string): Tagged {
    const raw = typeof stage === 'string' && stage.length <= STAGE_TEXT ? stage : (captureText(stage, STAGE_TEXT) ?? '');
    const known = this.perStage.get(raw);
    if (known) return known;
    if (this.perStage.size >= MAX_STAGES) return this.overflow;
    const clean = captureText(raw, STAGE_TEXT) ?? '';
    const tagged = { attributes: { stage: clean }, key: `${this.name}\u0000${clean}` };
    this.perStage.set(raw, tagged);
    return tagged;
  }
}

interface Tagged {
  attributes: Attributes & { stage: string };
  key: string;
}

/** Distinct stages remembered per instrument; records of further stages go to the overflow series. */
export const MAX_STAGES = 1_000;
/** The stage tag of that overflow series. */
export const OVERFLOW_STAGE = '(overflow)';
const STAGE_TEXT = CAPTURE_TEXT.name;

/** Parses OTEL_EXPORTER_OTLP_HEADERS (`key=value,key2=value2`). */
function otlpHeaders(text: string | null): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const eq = pair.indexOf('=');
    if (eq > 0) headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return headers;
}

/**
 * The OpenTelemetry histograms and counters of the pipelines (service.md 6), on a MeterProvider of
 * our own (no global registration, so tests and several apps in one process do not collide). Without
 * EnableOpenTelemetry there is no provider at all: a provider with no reader kept nothing anyway, and
 * the SDK (about 150 files) is then not loaded, a tenth of a second of every start (issue 33). The
 * OpenTelemetryMetric capture queue records either way.
 */
@Injectable()
export class TelemetryMetrics implements OnModuleDestroy {
  private readonly provider: MeterProvider | null = null;
  readonly archiverStageDuration: StageInstrument;
  readonly caseCreationStageDuration: StageInstrument;
  readonly invokeStageDuration: StageInstrument;
  readonly archiverWarnCount: StageInstrument;
  readonly caseCreationWarnCount: StageInstrument;
  readonly logsWarnCount: StageInstrument;

  constructor(@Inject(SETTINGS) settings: AppSettings, queues: CaptureQueues) {
    let meter: Meter | null = null;
    if (settings.enableOpenTelemetry) {
      const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
      const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
      const base = (settings.otlpEndpoint ?? 'http://localhost:4318').replace(/\/+$/, '');
      // Loaded only when exporting (its HTTP transport and protobuf code cost every start otherwise).
      const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http');
      const exporter = new OTLPMetricExporter({
        url: base.endsWith('/v1/metrics') ? base : `${base}/v1/metrics`,
        headers: otlpHeaders(settings.otlpHeaders),
      });
      this.provider = new MeterProvider({
        resource: resourceFromAttributes({ 'service.name': 'transaction-monitoring', 'service.instance.id': settings.instance }),
        readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: settings.otlpExportIntervalMs })],
      });
      meter = this.provider.getMeter('service.engine');
      new Logger('TelemetryMetrics').log(`exporting OpenTelemetry metrics to ${base}`);
    }
    const histogram = (name: string, description: string) =>
      new StageInstrument(name, meter?.createHistogram(name, { unit: 'ms', description }) ?? null, queues);
    const counter = (name: string, description: string) => new StageInstrument(name, meter?.createCounter(name, { description }) ?? null, queues);
    this.archiverStageDuration = histogram(METRIC_NAMES.archiverStageDuration, 'Archiver stage duration, by stage.');
    this.caseCreationStageDuration = histogram(METRIC_NAMES.caseCreationStageDuration, 'Case creation stage duration, by stage.');
    this.invokeStageDuration = histogram(METRIC_NAMES.invokeStageDuration, 'Invoke pipeline stage duration, by stage.');
    this.archiverWarnCount = counter(METRIC_NAMES.archiverWarnCount, 'Archiver stage invocations over the warn threshold.');
    this.caseCreationWarnCount = counter(METRIC_NAMES.caseCreationWarnCount, 'Case creation stage invocations over the warn threshold.');
    this.logsWarnCount = counter(METRIC_NAMES.logsWarnCount, 'Invoke trace points over the model warn threshold.');
  }

  async onModuleDestroy(): Promise<void> {
    await this.provider?.shutdown().catch(() => undefined);
  }
}

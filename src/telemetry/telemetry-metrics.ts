import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { CaptureQueues } from '../capture-queues/capture-queues.service';
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
  private readonly perStage = new Map<string, { attributes: Attributes & { stage: string }; key: string }>();

  constructor(
    readonly name: string,
    private readonly sink: Histogram | Counter,
    private readonly queues: CaptureQueues,
  ) {}

  record(value: number, stage: string): void {
    let tagged = this.perStage.get(stage);
    if (!tagged) {
      tagged = { attributes: { stage }, key: `${this.name}\u0000${stage}` };
      this.perStage.set(stage, tagged);
    }
    if ('record' in this.sink) this.sink.record(value, tagged.attributes);
    else this.sink.add(value, tagged.attributes);
    this.queues.metrics.record(tagged.key, this.name, tagged.attributes as Record<string, string>, value);
  }
}

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
 * our own (no global registration, so tests and several apps in one process do not collide).
 */
@Injectable()
export class TelemetryMetrics implements OnModuleDestroy {
  private readonly provider: MeterProvider;
  readonly archiverStageDuration: StageInstrument;
  readonly caseCreationStageDuration: StageInstrument;
  readonly invokeStageDuration: StageInstrument;
  readonly archiverWarnCount: StageInstrument;
  readonly caseCreationWarnCount: StageInstrument;
  readonly logsWarnCount: StageInstrument;

  constructor(@Inject(SETTINGS) settings: AppSettings, queues: CaptureQueues) {
    const readers = [];
    if (settings.enableOpenTelemetry) {
      const base = (settings.otlpEndpoint ?? 'http://localhost:4318').replace(/\/+$/, '');
      const exporter = new OTLPMetricExporter({
        url: base.endsWith('/v1/metrics') ? base : `${base}/v1/metrics`,
        headers: otlpHeaders(settings.otlpHeaders),
      });
      readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: settings.otlpExportIntervalMs }));
      new Logger('TelemetryMetrics').log(`exporting OpenTelemetry metrics to ${base}`);
    }
    this.provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'transaction-monitoring', 'service.instance.id': settings.instance }),
      readers,
    });
    const meter = this.provider.getMeter('service.engine');
    const histogram = (name: string, description: string) =>
      new StageInstrument(name, meter.createHistogram(name, { unit: 'ms', description }), queues);
    const counter = (name: string, description: string) => new StageInstrument(name, meter.createCounter(name, { description }), queues);
    this.archiverStageDuration = histogram(METRIC_NAMES.archiverStageDuration, 'Archiver stage duration, by stage.');
    this.caseCreationStageDuration = histogram(METRIC_NAMES.caseCreationStageDuration, 'Case creation stage duration, by stage.');
    this.invokeStageDuration = histogram(METRIC_NAMES.invokeStageDuration, 'Invoke pipeline stage duration, by stage.');
    this.archiverWarnCount = counter(METRIC_NAMES.archiverWarnCount, 'Archiver stage invocations over the warn threshold.');
    this.caseCreationWarnCount = counter(METRIC_NAMES.caseCreationWarnCount, 'Case creation stage invocations over the warn threshold.');
    this.logsWarnCount = counter(METRIC_NAMES.logsWarnCount, 'Invoke trace points over the model warn threshold.');
  }

  async onModuleDestroy(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

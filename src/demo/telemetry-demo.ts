import '../runtime-check';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createApp, displayUrl } from '../bootstrap';
import { CaptureFlusher } from '../capture-queues/capture-flusher.service';
import { secureDataDirectoryOrExit } from '../config/data-directory';
import { resolveSecrets } from '../config/secrets';
import { loadSettings, SettingsError } from '../config/settings';
import { refuseIfEmbeddedDatabaseInUse } from '../database/data-directory-lock';
import { PipelineTelemetry } from '../telemetry/pipeline-telemetry.service';
import { ArchiverStage, CaseCreationStage } from '../telemetry/telemetry.types';
import { TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { messageOf } from '../common/errors';

/**
 * `npm run telemetry:demo [-- --minutes=3]`: runs the service against the configured database (the
 * embedded one by default) and drives realistic pipeline activity through the instrumentation API for
 * a few minutes, so the telemetry pages have something to show. Flushing happens exactly as in the
 * service (once a minute, and once more at the end). While it runs it also serves the pages on Port.
 * The embedded database opens in one process at a time: beside a running `npm start` on the same
 * DataDirectory the demo refuses at once and says so (stop the service, run the demo, and look at
 * the pages it serves; `npm start` afterwards shows the same rows). With ConnectionString set, demo
 * and service share the database and run side by side.
 */

function minutesFlag(argv: string[]): number {
  const flag = argv.find((a) => a.startsWith('--minutes='));
  const minutes = flag ? Number(flag.slice('--minutes='.length)) : 3;
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) throw new Error('--minutes must be a positive number of minutes');
  return minutes;
}

/** A log-normal duration in microseconds around `medianMs`, with a rare slow outlier. */
function duration(medianMs: number, outlierMs: number, outlierChance: number): number {
  if (Math.random() < outlierChance) return Math.round(outlierMs * 1000 * (1 + Math.random()));
  const normal = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return Math.max(1, Math.round(medianMs * 1000 * Math.exp(0.6 * normal)));
}

const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)];

async function main(): Promise<void> {
  const minutes = minutesFlag(process.argv.slice(2));
  const loaded = loadSettings(process.env);
  secureDataDirectoryOrExit(loaded, (message) => new Logger('DataDirectory').log(message));
  const settings = resolveSecrets(loaded);
  refuseIfEmbeddedDatabaseInUse(
    settings,
    ' (the demo serves the pages itself while it runs: stop the service first, then run the demo)',
  );
  const logger = new Logger('TelemetryDemo');
  const app = await createApp(settings);
  try {
    await app.listen(settings.port, settings.bindAddress ?? '127.0.0.1');
    logger.log(`pages at ${displayUrl(app, { bindAddress: settings.bindAddress ?? '127.0.0.1' })}/Administration/Performance/ArchiverWarning (sign in as the landlord administrator)`);
  } catch (error) {
    logger.warn(`not serving pages (${messageOf(error)}); activity continues`);
  }
  const telemetry = app.get(PipelineTelemetry);
  const archiverWarnMs = settings.archiverWarnThresholdMilliseconds;
  const caseWarnMs = settings.caseCreationWarnThresholdMilliseconds;
  const models = [
    { guid: randomUUID(), name: 'Card Fraud', warnMs: 40 },
    { guid: randomUUID(), name: 'Anti Money Laundering', warnMs: 60 },
    { guid: randomUUID(), name: 'Account Takeover', warnMs: 25 },
  ];
  const workflows = [
    { guid: randomUUID(), name: 'Fraud Investigation', key: 'AccountId' },
    { guid: randomUUID(), name: 'AML Review', key: 'CustomerId' },
  ];
  const tracePoints = ['Abstraction', 'Activation rules', 'Sanctions', 'Exhaustive model', 'Response'];

  let invocations = 0;
  const tick = () => {
    for (let i = 0; i < 25; i++) {
      invocations++;
      const model = pick(models);
      const entry = randomUUID();
      // Model invoke trace points: gaps mostly well under the model's warn threshold.
      let elapsed = 0;
      for (const point of tracePoints) {
        const gap = duration(model.warnMs / 6, model.warnMs, 0.002);
        elapsed += gap;
        telemetry.recordTracePoint({
          modelGuid: model.guid,
          modelName: model.name,
          entryGuid: entry,
          message: `${point} complete`,
          elapsedMicroseconds: elapsed,
          sinceLastEntryMicroseconds: gap,
          warnThresholdMilliseconds: model.warnMs,
          stage: point,
        });
      }
      telemetry.recordArchiverStage(model.guid, model.name, ArchiverStage.BuildArchiveJson, duration(0.4, archiverWarnMs, 0.0005), entry);
      telemetry.recordArchiverStage(model.guid, model.name, ArchiverStage.CaseCreationDispatch, duration(0.2, archiverWarnMs, 0.0005), entry);
      telemetry.recordArchiverStage(model.guid, model.name, ArchiverStage.RdbmsArchiveWrite, duration(2, archiverWarnMs, 0.001), entry);
      if (Math.random() < 0.1) {
        const workflow = pick(workflows);
        const context = {
          caseWorkflowGuid: workflow.guid,
          caseWorkflowName: workflow.name,
          caseKey: workflow.key,
          caseKeyValue: `${workflow.key === 'AccountId' ? 'ACC' : 'CUS'}-${Math.floor(Math.random() * 100000)}`,
        };
        telemetry.recordCaseCreationStage(CaseCreationStage.ExistingCasePriorityLookup, duration(1.5, caseWarnMs, 0.002), context);
        telemetry.recordCaseCreationStage(CaseCreationStage.WorkflowStatusLookupAndPersist, duration(3, caseWarnMs, 0.002), context);
        if (Math.random() < 0.3) {
          telemetry.recordCaseCreationStage(CaseCreationStage.Notification, duration(20, caseWarnMs, 0.01), {
            ...context,
            destination: 'fraud-team@bank.example',
          });
        }
        if (Math.random() < 0.2) {
          telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, duration(80, caseWarnMs, 0.02), {
            ...context,
            destination: 'https://case-hooks.bank.example/callback',
          });
        }
      }
    }
  };
  const activity = setInterval(tick, 100);
  const bulkCopy = setInterval(() => {
    for (const model of models) telemetry.recordArchiverStage(model.guid, model.name, ArchiverStage.BulkCopyArchiveBuffer, duration(35, archiverWarnMs, 0.01));
  }, 5000);
  logger.log(`driving pipeline activity for ${minutes} minute(s); flushing once a minute as the service does`);
  await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
  clearInterval(activity);
  clearInterval(bulkCopy);
  await app.get(CaptureFlusher).flush();

  const dataSource = app.get(DataSource);
  // Every telemetry table, counted at the end (the Redis event logs fill only when Redis has something to say).
  for (const { entity } of TELEMETRY_TABLES) {
    const repository = dataSource.getRepository(entity);
    logger.log(`${repository.metadata.tableName}: ${await repository.count()} rows`);
  }
  logger.log(`${invocations} simulated invocations`);
  await app.close();
}

main().catch((error: unknown) => {
  if (error instanceof SettingsError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`telemetry demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

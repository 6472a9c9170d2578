import './runtime-check';
import 'reflect-metadata';
import { resolveSecrets } from './config/secrets';
import { loadSettings, SettingsError } from './config/settings';
import { refuseIfEmbeddedDatabaseInUse } from './database/data-directory-lock';

async function main(): Promise<void> {
  let settings;
  try {
    // The only place the environment is read.
    settings = resolveSecrets(loadSettings(process.env));
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  refuseIfEmbeddedDatabaseInUse(settings);
  // Loaded only now, so the refusals above come at once, before the framework is loaded.
  const { createApp, listen } = require('./bootstrap') as typeof import('./bootstrap');
  const app = await createApp(settings);
  await listen(app, settings);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

import './runtime-check';
import 'reflect-metadata';
import { PrivateFileError } from './common/private-file';
import { secureDataDirectoryOrExit } from './config/data-directory';
import { resolveSecrets } from './config/secrets';
import { loadSettings, SettingsError } from './config/settings';
import { refuseIfEmbeddedDatabaseInUse } from './database/data-directory-lock';

async function main(): Promise<void> {
  let settings;
  try {
    // The only place the environment is read.
    settings = loadSettings(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  // Before anything is written there: DataDirectory private, or one line and exit.
  const { logLevel, logFormat } = settings;
  secureDataDirectoryOrExit(settings, (message) => {
    // The logger (and the framework it belongs to) only when there is something to say.
    const { AppLogger } = require('./common/app-logger') as typeof import('./common/app-logger');
    new AppLogger({ level: logLevel, format: logFormat }).log(message, 'DataDirectory');
  });
  try {
    settings = resolveSecrets(settings);
  } catch (error) {
    if (error instanceof PrivateFileError) {
      process.stderr.write(`Refusing to start: ${error.message}\n`);
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

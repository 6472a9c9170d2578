/**
 * The TypeORM CLI data source (`npm run typeorm -- migration:show`). It reads ConnectionString
 * through the same settings parser as the service; the embedded database has no CLI access.
 */
import { DataSource } from 'typeorm';
import { loadSettings } from './src/config/settings';
import { dataSourceOptions } from './src/database/data-source';

const settings = loadSettings(process.env);
if (!settings.connectionString) {
  throw new Error('ConnectionString must be set to use the TypeORM CLI');
}
export default new DataSource(dataSourceOptions(settings.connectionString));

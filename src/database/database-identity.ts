import { Logger, Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppSettings, SETTINGS } from '../config/config.module';

/**
 * Injection token of what names the deployment's database whatever address a node reaches it by (a
 * pooler, a DNS name, an IP): the cluster's system identifier and the database's name. The keys of
 * per-address rules in a shared Redis start with its hash (bus/redis.bus.ts, redisKeyNamespace), so
 * nodes that reach one database by different addresses still count together.
 */
export const DATABASE_IDENTITY = Symbol('DATABASE_IDENTITY');

/** Read once at start (any role may call pg_control_system()); the address stands in if it cannot be. */
export const databaseIdentityProvider: Provider = {
  provide: DATABASE_IDENTITY,
  inject: [DataSource, SETTINGS],
  useFactory: async (dataSource: DataSource, settings: AppSettings): Promise<string> => {
    try {
      const [row] = (await dataSource.query(`SELECT system_identifier::text AS "system", current_database() AS "database" FROM pg_control_system()`)) as Array<{
        system: string;
        database: string;
      }>;
      return `${row.system}/${row.database}`;
    } catch (error) {
      new Logger('Database').warn(`the database's system identifier cannot be read (${(error as Error).message}); its address names it instead, which every node must then use`);
      if (!settings.connectionString) return `embedded:${settings.dataDirectory}`;
      const url = new URL(settings.connectionString);
      return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
    }
  },
};

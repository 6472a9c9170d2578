import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppSettings, SETTINGS } from '../config/config.module';
import { dataSourceOptions, migrate, PoolOptions } from './data-source';
import { serviceChangeMark, serviceMarkStartupOption, writeServiceChangeMark } from './service-change-mark';
import { DatabaseBreaker, deadlinePoolOptions } from './deadlines';
import { EmbeddedPostgres, startEmbeddedPostgres } from './embedded';
import { DATABASE_IDENTITY, databaseIdentityProvider } from './database-identity';
import { Transactions } from './transactions';
import { findServiceSchema, SearchPathAmbiguous, searchPathStartupOption } from './search-path';

/** Injection token of the embedded PostgreSQL handle (null when ConnectionString is set). */
export const EMBEDDED_POSTGRES = Symbol('EMBEDDED_POSTGRES');

/** Starts the embedded PostgreSQL when no ConnectionString is set, and stops it on shutdown. */
@Module({
  providers: [
    {
      provide: EMBEDDED_POSTGRES,
      inject: [SETTINGS],
      useFactory: async (settings: AppSettings) =>
        settings.connectionString ? null : startEmbeddedPostgres(settings.dataDirectory),
    },
  ],
  exports: [EMBEDDED_POSTGRES],
})
export class EmbeddedPostgresModule implements OnApplicationShutdown {
  constructor(@Inject(EMBEDDED_POSTGRES) private readonly embedded: EmbeddedPostgres | null) {}

  async onApplicationShutdown(): Promise<void> {
    // TypeORM closes its pool in the same phase; give it a moment before the server goes away.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await this.embedded?.stop().catch(() => undefined);
  }
}

/** The breaker of the service's pool (see deadlines.ts), shared with the readiness check. */
@Module({ providers: [DatabaseBreaker], exports: [DatabaseBreaker] })
export class DatabaseBreakerModule {}

/**
 * PostgreSQL for the whole service: ConnectionString when set, otherwise the embedded PGlite.
 * Migrations run before anything else can use the connection, under an advisory lock.
 */
@Global()
@Module({
  imports: [
    EmbeddedPostgresModule,
    DatabaseBreakerModule,
    TypeOrmModule.forRootAsync({
      imports: [EmbeddedPostgresModule, DatabaseBreakerModule],
      inject: [SETTINGS, EMBEDDED_POSTGRES, DatabaseBreaker],
      useFactory: (settings: AppSettings, embedded: EmbeddedPostgres | null, breaker: DatabaseBreaker) => ({
        ...dataSourceOptions(embedded?.connectionString ?? settings.connectionString!, embedded ? 8 : 20, {
          idleTimeoutMillis: settings.databasePoolIdleTimeoutMs,
          // The mark of the service's own registry changes, a setting of each of its sessions
          // (service-change-mark.ts); the embedded database's one session gets it after the migrations.
          serviceMark: serviceChangeMark(settings.apiHmacKey),
          // On a server, also no JIT for any statement: it only ever cost this service's statements time
          // (2.3 s compiling a 7 ms sink batch, ~55 ms a sealing batch; bench/RESULTS.md). PGlite has none.
          ...(embedded ? { stream: embedded.stream } : { options: `${serviceMarkStartupOption(serviceChangeMark(settings.apiHmacKey))} -c jit=off` }),
          // Every wait on PostgreSQL has a deadline. The embedded database is one in-process session
          // with no network to lose: its statements queue behind each other, so only a server gets them.
          ...(embedded
            ? {}
            : deadlinePoolOptions(breaker, {
                connectTimeoutMs: settings.databaseConnectTimeoutMs,
                queryTimeoutMs: settings.databaseQueryTimeoutMs,
                serverTimeouts: true,
              })),
        }),
        autoLoadEntities: true,
        // TypeORM's error log prints the failed statement with its parameters, which can hold
        // password hashes or key hashes; callers log what failed without the values instead.
        logging: false,
        // A search path naming two schemas of the service's tables stays so: no retry (search-path.ts).
        toRetry: (error: unknown) => !(error instanceof SearchPathAmbiguous),
      }),
      dataSourceFactory: async (options) => {
        const pool = options!.extra as PoolOptions;
        // On a server, every session's search path is pinned to the schema of the service's tables (search-path.ts).
        if (pool.stream === undefined) {
          const { url } = options as { url: string };
          const { schema, before } = await findServiceSchema({ ...(pool as object), connectionString: url });
          // From the options as configured: a retried start (the database not answering yet) adds no second path.
          const configured = (pool.configuredOptions ??= typeof pool.options === 'string' ? pool.options : '');
          pool.options = schema === null ? configured : `${configured} ${searchPathStartupOption(schema)}`.trim();
          if (before !== null) {
            new Logger('Database').warn(`the schema "${before}" comes first in the search path, but the service's tables are in "${schema}": the service uses "${schema}" only`);
          }
        }
        const dataSource = await new DataSource(options!).initialize();
        await migrate(dataSource);
        new Logger('Database').log('migrations applied');
        const { replacedAnother } = await writeServiceChangeMark(dataSource, pool.serviceMark!, { sessionSetting: pool.stream !== undefined });
        if (replacedAnother) {
          new Logger('Database').warn(
            'the mark of the service\'s own registry changes differed from the one stored by another node (or before ApiHmacKey changed): every node must have the same ApiHmacKey, or the changes of the others are also recorded as made in the database',
          );
        }
        return dataSource;
      },
    }),
  ],
  providers: [
    Transactions,
    databaseIdentityProvider,
  ],
  exports: [Transactions, DatabaseBreakerModule, DATABASE_IDENTITY],
})
export class DatabaseModule {}

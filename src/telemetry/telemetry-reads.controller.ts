import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { GridReads } from '../reads/grid-read.service';
import { ColumnStatisticsDto, GridReadDocs, SeriesDocs } from '../reads/read-docs';
import { SeriesAnswer } from '../reads/series-sql';
import { TELEMETRY_TABLES } from './telemetry.tables';
import type { TelemetryTable } from './telemetry-table';

/**
 * The background-processing telemetry reads (service.md 4.3, contract 10): landlord only. Their
 * routes are made below from the table descriptions in telemetry.tables.ts, two per table: the grid
 * read `GET /api/<table>` and, beside it, its series `GET /api/<table>/Series` (contract 17).
 */
@ApiTags('Telemetry')
@ApiExtraModels(ColumnStatisticsDto)
@Authenticated({ landlord: true })
@Controller('api')
export class TelemetryReadsController {
  constructor(readonly reads: GridReads) {}
}

type Handler = (this: TelemetryReadsController, req: Request, res: Response, principal: Principal) => Promise<void | SeriesAnswer>;

/**
 * Adds one route method to the controller, decorated as a hand-written method would be:
 * `@Get(path) @Docs method(@Req() req, @Res() res, @CurrentPrincipal() p)` (with `@Res` only for a
 * grid read, which streams its answer itself).
 */
function route(name: string, path: string, docs: MethodDecorator, streams: boolean, handler: Handler): void {
  const prototype = TelemetryReadsController.prototype as unknown as Record<string, unknown>;
  const method = streams
    ? function (this: TelemetryReadsController, req: Request, res: Response, principal: Principal) {
        return handler.call(this, req, res, principal);
      }
    : function (this: TelemetryReadsController, req: Request, principal: Principal) {
        return handler.call(this, req, undefined as unknown as Response, principal);
      };
  Object.defineProperty(method, 'name', { value: name });
  Object.defineProperty(prototype, name, { value: method, writable: true, configurable: true, enumerable: false });
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
  const params = streams ? [Req(), Res(), CurrentPrincipal()] : [Req(), CurrentPrincipal()];
  params.forEach((decorate, index) => decorate(prototype, name, index));
  Reflect.defineMetadata('design:paramtypes', params.map(() => Object), prototype, name);
  Reflect.defineMetadata('design:returntype', Promise, prototype, name);
  docs(prototype, name, descriptor);
  Get(path)(prototype, name, descriptor);
}

/** `archiverWarning` for ArchiverWarning: the method (and OpenAPI operation) name of a table's read. */
const methodName = (table: TelemetryTable) => table.read.table.charAt(0).toLowerCase() + table.read.table.slice(1);

for (const table of TELEMETRY_TABLES) {
  route(methodName(table), table.read.table, GridReadDocs(table.read, table.summary), true, function (req, res, p) {
    return this.reads.answer(table.read, req, res, p);
  });
}

// The series beside each read (contract 17): the same description, bucketed and grouped in PostgreSQL.
for (const table of TELEMETRY_TABLES) {
  const name = table.read.table;
  route(`${methodName(table)}Series`, `${name}/Series`, SeriesDocs(table.read, `${name} over time: points per bucket, optionally one series per group.`), false, function (req, _res, p) {
    return this.reads.series(table.read, req, p);
  });
}

import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';

/**
 * Start-time housekeeping that no request depends on (the partitions ahead, the retention run, the
 * check for rows outside the log) waits until the HTTP server listens: it ran before, and the
 * embedded database runs one statement at a time, so a restart waited for it before `listening on`
 * (issue 33, docs/decisions/0026). What a request needs (migrations, seeding, the active API keys,
 * the signing keys) is still done before listening, so nothing answers differently after this line.
 *
 * An application that is only initialised and never listens (a tool, a test of a module) runs none
 * of these jobs at start; each also runs on its schedule, and tests call the services directly.
 */
@Injectable()
export class AfterListening {
  constructor(private readonly adapter: HttpAdapterHost) {}

  /**
   * Starts `job` in the server's 'listening' event (at once if it already listens), so it has begun
   * before `app.listen()` resolves: a caller that then asks a service for the same run (tests do)
   * joins or follows it rather than racing a run started later. The job handles its own errors.
   */
  run(job: () => Promise<void>): void {
    const server = this.adapter.httpAdapter?.getHttpServer?.() as Server | undefined;
    if (!server) return;
    const start = () => void job();
    if (server.listening) start();
    else server.once('listening', start);
  }
}

import type { LogLevel } from '@nestjs/common';
import { AppLogger } from '../../src/common/app-logger';

export interface LogLine {
  level: LogLevel;
  context: string;
  message: string;
}

/**
 * The service's own logger (AppLogger, with its summary of repeated lines), writing into `lines`
 * instead of the console, so a test can count what an operator would read.
 */
export class CapturedLogs extends AppLogger {
  readonly lines: LogLine[] = [];

  constructor() {
    super({ level: 'log', format: 'text', colors: false });
  }

  protected override printMessages(messages: unknown[], context = '', logLevel: LogLevel = 'log'): void {
    for (const message of messages) this.lines.push({ level: logLevel, context, message: String(message) });
  }

  count(level: LogLevel, pattern?: RegExp): number {
    return this.lines.filter((line) => line.level === level && (!pattern || pattern.test(line.message))).length;
  }
}

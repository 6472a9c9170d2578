import { ConsoleLogger, LogLevel } from '@nestjs/common';
import { messageOf } from './errors';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Nest's own start-up chatter (one line per module and per route): shown at LogLevel=verbose only. */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Distinct repeated messages remembered per interval; beyond this the oldest is summarised early. */
const MAX_REPEATS = 256;
/** Longest message text used as a key (longer texts are cut, still distinct enough). */
const MAX_KEY = 512;

export interface AppLoggerOptions {
  /** The most detailed level written (LogLevel). */
  level: Exclude<LogLevel, 'fatal'>;
  format: 'text' | 'json';
  /** Identical errors and warnings within this window are written once, then once with a count. */
  repeatWindowMs?: number;
  /** Colours; by default only when standard output is a terminal and NO_COLOR is unset. */
  colors?: boolean;
}

interface Repeat {
  level: 'error' | 'warn';
  message: string;
  context: string;
  /** Held back since `since` (epoch ms). */
  count: number;
  since: number;
}

/**
 * The service's logger: Nest's console logger, with
 * - no ANSI colours unless standard output is a terminal (log files and shippers get plain text),
 * - `LogFormat=json`: one JSON object per line with timestamp (ISO 8601), level, context, message,
 * - repeated identical errors and warnings (a refused request per second while the database is
 *   down) written once, then once per window with how many more there were, from a bounded map,
 * - Nest's per-module and per-route start-up lines moved to LogLevel=verbose.
 */
export class AppLogger extends ConsoleLogger {
  private readonly repeats = new Map<string, Repeat>();
  private readonly windowMs: number;
  private timer: NodeJS.Timeout | null = null;
  private readonly flushOnExit = () => this.flushRepeats();

  constructor(options: AppLoggerOptions) {
    const json = options.format === 'json';
    super({
      logLevels: LEVELS.slice(0, LEVELS.indexOf(options.level) + 1),
      json,
      colors: options.colors ?? (!json && process.stdout.isTTY === true && !process.env.NO_COLOR),
      // Nest's default breaks a JSON record over several lines when colours are off.
      compact: json ? true : undefined,
    });
    this.windowMs = options.repeatWindowMs ?? 60_000;
    process.on('exit', this.flushOnExit);
  }

  override log(message: unknown, ...optionalParams: unknown[]): void {
    const { context } = this.getContextAndMessagesToPrint([message, ...optionalParams]);
    if (FRAMEWORK_CONTEXTS.has(context ?? '')) {
      if (this.isLevelEnabled('verbose')) super.verbose(message, ...optionalParams);
      return;
    }
    super.log(message, ...optionalParams);
  }

  override error(message: unknown, ...optionalParams: unknown[]): void {
    if (this.isLevelEnabled('error') && this.isRepeat('error', message, optionalParams)) return;
    super.error(message, ...optionalParams);
  }

  override warn(message: unknown, ...optionalParams: unknown[]): void {
    if (this.isLevelEnabled('warn') && this.isRepeat('warn', message, optionalParams)) return;
    super.warn(message, ...optionalParams);
  }

  /** Writes the counts of what was held back, and forgets it (also at exit). */
  flushRepeats(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = [...this.repeats.values()];
    this.repeats.clear();
    for (const repeat of pending) this.summarise(repeat);
  }

  /** Stops the window timer and the exit hook (an application closing its logger). */
  close(): void {
    this.flushRepeats();
    process.off('exit', this.flushOnExit);
  }

  protected override stringifyJsonLogObject(record: Record<string, unknown>): string {
    // ISO 8601 rather than epoch milliseconds, and the documented fields first.
    const { level, timestamp, context, message, ...rest } = record;
    return super.stringifyJsonLogObject({
      timestamp: new Date(timestamp as number).toISOString(),
      level,
      context: context ?? '',
      message,
      ...rest,
    });
  }

  /** True when this message was already written in the current window (it is then only counted). */
  private isRepeat(level: 'error' | 'warn', message: unknown, optionalParams: unknown[]): boolean {
    if (this.windowMs <= 0) return false;
    const { messages, context } =
      level === 'error'
        ? this.getContextAndStackAndMessagesToPrint([message, ...optionalParams])
        : this.getContextAndMessagesToPrint([message, ...optionalParams]);
    const text = messages.map((m) => (typeof m === 'string' ? m : messageOf(m))).join(' ');
    const key = `${level}\u0000${context}\u0000${text.slice(0, MAX_KEY)}`;
    const seen = this.repeats.get(key);
    if (seen) {
      seen.count++;
      return true;
    }
    if (this.repeats.size >= MAX_REPEATS) {
      const [oldestKey, oldest] = this.repeats.entries().next().value as [string, Repeat];
      this.repeats.delete(oldestKey);
      this.summarise(oldest);
    }
    this.repeats.set(key, { level, message: text, context: context ?? '', count: 0, since: Date.now() });
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushRepeats(), this.windowMs);
      this.timer.unref();
    }
    return false;
  }

  private summarise(repeat: Repeat): void {
    if (repeat.count === 0) return;
    const seconds = Math.max(1, Math.round((Date.now() - repeat.since) / 1000));
    const text = `${repeat.message} [repeated ${repeat.count} more time${repeat.count === 1 ? '' : 's'} in the last ${seconds} s]`;
    if (repeat.level === 'error') super.error(text, repeat.context);
    else super.warn(text, repeat.context);
  }
}

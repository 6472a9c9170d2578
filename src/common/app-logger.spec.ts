import { AppLogger } from './app-logger';

/** What the logger wrote to standard output and standard error, as lines. */
function capture(): { lines: () => string[]; restore: () => void } {
  const written: string[] = [];
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return {
    lines: () => written.join('').split('\n').filter((line) => line !== ''),
    restore: () => {
      out.mockRestore();
      err.mockRestore();
    },
  };
}

describe('AppLogger', () => {
  let output: ReturnType<typeof capture>;
  let logger: AppLogger | undefined;
  beforeEach(() => {
    output = capture();
  });
  afterEach(() => {
    logger?.close();
    output.restore();
  });

  it('writes text without colours when asked, and JSON lines with timestamp, level, context, message', () => {
    logger = new AppLogger({ level: 'log', format: 'text', colors: false });
    logger.log('plain', 'Ctx');
    logger.close();
    logger = new AppLogger({ level: 'log', format: 'json' });
    logger.warn('as json', 'Ctx');
    const [text, json] = output.lines();
    expect(text).toMatch(/LOG \[Ctx\] plain$/);
    expect(text).not.toMatch(/\u001b\[/);
    const record = JSON.parse(json);
    expect(Object.keys(record).slice(0, 4)).toEqual(['timestamp', 'level', 'context', 'message']);
    expect(record).toMatchObject({ level: 'warn', context: 'Ctx', message: 'as json' });
    expect(new Date(record.timestamp).toISOString()).toBe(record.timestamp);
  });

  it('writes a repeated error once, then once with the count; distinct errors and contexts apart', () => {
    logger = new AppLogger({ level: 'log', format: 'json', repeatWindowMs: 60_000 });
    for (let i = 0; i < 10; i++) logger.error('database down', undefined, 'Guard');
    logger.error('database down', undefined, 'Other');
    logger.error('another failure', undefined, 'Guard');
    expect(output.lines().map((line) => JSON.parse(line).message)).toEqual(['database down', 'database down', 'another failure']);
    logger.flushRepeats();
    const summary = output.lines().map((line) => JSON.parse(line)).slice(3);
    expect(summary).toEqual([expect.objectContaining({ level: 'error', context: 'Guard', message: expect.stringMatching(/^database down \[repeated 9 more times in the last \d+ s\]$/) })]);
    // A new window starts afresh.
    logger.error('database down', undefined, 'Guard');
    expect(output.lines()).toHaveLength(5);
  });

  it('keeps a bounded number of distinct messages: the oldest is summarised early and forgotten', () => {
    logger = new AppLogger({ level: 'log', format: 'json', repeatWindowMs: 60_000 });
    logger.warn('first', 'Ctx');
    logger.warn('first', 'Ctx');
    for (let i = 0; i < 256; i++) logger.warn(`caller-chosen text ${i}`, 'Ctx');
    const messages = output.lines().map((line) => JSON.parse(line).message as string);
    expect(messages.filter((m) => m.startsWith('first'))).toEqual(['first', expect.stringMatching(/^first \[repeated 1 more time in the last \d+ s\]$/)]);
    expect(messages).toHaveLength(2 + 256);
    expect((logger as unknown as { repeats: Map<string, unknown> }).repeats.size).toBe(256);
  });

  it("moves Nest's per-module and per-route start-up lines to verbose", () => {
    logger = new AppLogger({ level: 'log', format: 'text', colors: false });
    logger.log('Mapped {/x, GET} route', 'RouterExplorer');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('listening on http://localhost:5001', 'Bootstrap');
    expect(output.lines()).toEqual([expect.stringMatching(/\[Bootstrap\] listening on http:\/\/localhost:5001$/)]);
  });
});

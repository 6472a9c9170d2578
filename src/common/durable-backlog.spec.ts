import { appendFileSync, existsSync, lstatSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BacklogFlags, DurableBacklog, DurableBacklogOptions } from './durable-backlog';

interface Row extends BacklogFlags {
  n: number;
  text?: string;
}

const lineOf = ({ n, text }: Row) => ({ n, text: text?.slice(0, 3) });
const parse = (raw: Record<string, unknown>): Row | null => (typeof raw.n === 'number' ? { n: raw.n } : null);

describe('DurableBacklog: rows kept through an outage, on disk as each kind says', () => {
  let dir: string;
  let given: number[];
  const backlog = (options: Partial<DurableBacklogOptions<Row, ReturnType<typeof lineOf>>>) =>
    new DurableBacklog<Row, ReturnType<typeof lineOf>>({
      path: join(dir, 'spool', 'node.Rows.jsonl'),
      what: 'rows',
      capacity: 3,
      whenFull: 'give-up-newest',
      onGivenUp: (row) => given.push(row.n),
      spoolWhen: 'each-as-kept',
      rewriteKeeps: 'every-kept-row',
      toLine: lineOf,
      parse,
      ...options,
    });
  const onDisk = () => {
    const path = join(dir, 'spool', 'node.Rows.jsonl');
    return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown) : [];
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tm-backlog-'));
    given = [];
  });

  it('each-as-kept: a row is on disk (0600, its line as toLine makes it) when keep says so; full gives up the newest', async () => {
    const b = backlog({});
    const first = b.keep({ n: 1, text: 'abcdef' });
    expect(first.kept).toBe(true);
    expect(await first.onDisk).toBe(true);
    expect(onDisk()).toEqual([{ n: 1, text: 'abc' }]);
    expect(lstatSync(join(dir, 'spool', 'node.Rows.jsonl')).mode & 0o777).toBe(0o600);
    await b.keep({ n: 2 }).onDisk;
    await b.keep({ n: 3 }).onDisk;
    const refused = b.keep({ n: 4 });
    expect(refused.kept).toBe(false);
    expect(await refused.onDisk).toBe(false);
    expect(given).toEqual([4]);
    expect(b.oldest().map((r) => r.n)).toEqual([1, 2, 3]);
    expect(b.onDisk).toBe(3);
    await b.close();
  });

  it('when-asked: nothing reaches disk until spoolUnwritten, once each; full gives up the oldest and rewrites', async () => {
    const b = backlog({ whenFull: 'give-up-oldest', spoolWhen: 'when-asked', rewriteKeeps: 'rows-on-disk' });
    expect(await b.keep({ n: 1 }).onDisk).toBe(false);
    b.keep({ n: 2 });
    expect(onDisk()).toEqual([]);
    await b.spoolUnwritten();
    await b.spoolUnwritten();
    expect(onDisk()).toEqual([{ n: 1 }, { n: 2 }]);
    b.keep({ n: 3 });
    b.keep({ n: 4 });
    expect(given).toEqual([1]);
    // The rewrite after giving up 1 keeps only what was on disk (2), not 3 and 4 that were never asked for.
    await b.rewrite();
    expect(onDisk()).toEqual([{ n: 2 }]);
    expect(b.oldest().map((r) => r.n)).toEqual([2, 3, 4]);
    await b.close();
  });

  it('settle then rewrite leaves what still waits; written empties memory and removes the file', async () => {
    const b = backlog({ capacity: 10 });
    for (const n of [1, 2, 3]) await b.keep({ n }).onDisk;
    b.settle(2);
    await b.rewrite();
    expect(onDisk()).toEqual([{ n: 3 }]);
    await b.written();
    expect(b.length).toBe(0);
    expect(existsSync(join(dir, 'spool', 'node.Rows.jsonl'))).toBe(false);
    await b.close();
  });

  it('replay puts an earlier run\'s rows first, marked replayed and on disk; a line that is not a row is skipped', async () => {
    const earlier = backlog({ capacity: 10 });
    for (const n of [1, 2]) await earlier.keep({ n }).onDisk;
    await earlier.close();
    appendFileSync(join(dir, 'spool', 'node.Rows.jsonl'), '{"not":"a row"}\n{"n":');
    const b = backlog({ capacity: 10, spoolWhen: 'when-asked' });
    b.keep({ n: 3 });
    expect(await b.replay()).toBe(true);
    expect(b.oldest()).toEqual([
      { n: 1, replayed: true, onDisk: true },
      { n: 2, replayed: true, onDisk: true },
      { n: 3 },
    ]);
    expect(await backlog({ path: join(dir, 'none.jsonl') }).replay()).toBe(false);
    await b.close();
  });
});

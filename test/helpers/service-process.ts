import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything written so far, standard output and standard error apart. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` on standard output or standard error. */
  waitFor(pattern: RegExp, deadlineMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has ended. */
  exited(deadlineMs?: number): Promise<number | null>;
  /** SIGTERM, as a service manager stops it, and waits for the exit. */
  stop(): Promise<number | null>;
}

/**
 * Runs the real entry point `src/main.ts` (what `npm start` runs once built) in its own process,
 * compiled on the fly by ts-node with swc, with standard output and error piped (not a terminal),
 * exactly as a service manager or a log shipper sees it. Only the given environment is passed.
 */
export function startServiceProcess(env: Record<string, string>, entry = 'src/main.ts'): ServiceProcess {
  const child = spawn(process.execPath, ['-r', 'ts-node/register', entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TS_NODE_TRANSPILE_ONLY: 'true',
      TS_NODE_SWC: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
    for (const listener of listeners) listener();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exit.then((code) => {
    exitCode = code;
    for (const listener of listeners) listener();
  });

  // Generous: on a machine shared by several test runs, compiling and starting took over 2 minutes.
  const waitFor = (pattern: RegExp, deadlineMs = 300_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = out.match(pattern) ?? err.match(pattern);
        if (match) {
          done();
          resolve(match);
        } else if (exitCode !== undefined) {
          done();
          reject(new Error(`the service exited (${exitCode}) before writing ${pattern}:\n${out}\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`the service did not write ${pattern} within ${deadlineMs} ms:\n${out}\n${err}`));
      }, deadlineMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  const exited = (deadlineMs = 120_000) =>
    Promise.race([
      exit,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the service did not exit within ${deadlineMs} ms`)), deadlineMs).unref()),
    ]);

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    exited,
    async stop() {
      if (exitCode === undefined) child.kill('SIGTERM');
      return exited();
    },
  };
}

import { createServer, Server, Socket, connect } from 'node:net';

/**
 * A small TCP proxy of the tests' own, put between the service and PostgreSQL or Redis so a test can
 * cut the network in the middle of a run, both ways a real network fails:
 *
 * - `refuse()`: every connection is cut (reset) and new ones are refused, like a server that went
 *   down or a firewall that rejects;
 * - `blackhole()`: connections stay open and new ones are accepted, but every byte is silently
 *   dropped in both directions, like a partition or a stalled server: nothing fails, nothing answers;
 * - `loseAnswersAfter(pattern)`: one connection's request reaches the server but no answer comes back
 *   (a network lost between a COMMIT and its answer): the outcome of that statement is in doubt for
 *   the client, though the server did it;
 * - `restore()`: traffic flows again. Connections that lived through a black hole are reset (their
 *   streams lost bytes and can never be trusted again); the peers reconnect.
 *
 * The real servers are never touched.
 */
export interface TcpProxy {
  port: number;
  /** `postgres://…` / `redis://…` URL of the target with host and port replaced by the proxy's. */
  url(targetUrl: string): string;
  mode: 'pass' | 'refuse' | 'blackhole';
  refuse(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  /**
   * Sends new connections to another port from now on and cuts the open ones, as a virtual IP moved
   * to another server (a failover) does: the peers reconnect, to the new server.
   */
  retarget(targetPort: number): void;
  /**
   * Arms a one-shot fault: the first connection whose bytes sent to the server since now match
   * `pattern` (read as latin1, across its chunks) has them delivered, and from then on every byte the
   * server sends it is dropped; the client's own deadline ends it. Resolves once it happened.
   */
  loseAnswersAfter(pattern: RegExp): Promise<void>;
  /** Connections accepted since the start (to see that a client reconnected). */
  readonly accepted: number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | null;
  /** Lived through a black hole: reset on restore. */
  tainted: boolean;
  /** What the client sent since the armed loseAnswersAfter, while one is armed. */
  sent: string;
  /** Answers from the server are dropped (loseAnswersAfter fired on it). */
  answersLost: boolean;
}

/**
 * Resets a connection that is still open both ways (the peer sees ECONNRESET, as from a firewall);
 * one the peer already closed is only destroyed. Node 20's resetAndDestroy() on a socket whose peer
 * had already ended it leaves the handle closing for ever: the process then spins at 100% CPU after
 * the last test (it was the Jest open handle after test/database-faults.e2e-spec.ts).
 */
function cut(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.readableEnded || !socket.writable) socket.destroy();
  else socket.resetAndDestroy();
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let mode: TcpProxy['mode'] = 'pass';
  let accepted = 0;
  let target = targetPort;
  let server: Server;
  let armed: { pattern: RegExp; fired: () => void } | null = null;

  const drop = (pair: Pair) => {
    cut(pair.client);
    if (pair.upstream) cut(pair.upstream);
    pairs.delete(pair);
  };

  const onConnection = (client: Socket) => {
    accepted++;
    const pair: Pair = { client, upstream: null, tainted: mode === 'blackhole', sent: '', answersLost: false };
    pairs.add(pair);
    client.on('error', () => drop(pair));
    client.on('close', () => drop(pair));
    if (mode === 'blackhole') {
      // Accepted, then silence: whatever the client sends is read and thrown away.
      client.on('data', () => undefined);
      return;
    }
    const upstream = connect(target, targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => drop(pair));
    upstream.on('close', () => drop(pair));
    // Forward only while passing; in a black hole the bytes are read and dropped (the sockets stay open).
    client.on('data', (chunk: Buffer) => {
      if (mode !== 'pass' || pair.tainted) return;
      upstream.write(chunk);
      if (armed) {
        pair.sent += chunk.toString('latin1');
        if (armed.pattern.test(pair.sent)) {
          pair.answersLost = true;
          armed.fired();
          armed = null;
        }
      }
    });
    upstream.on('data', (chunk) => {
      if (mode === 'pass' && !pair.tainted && !pair.answersLost) client.write(chunk);
    });
  };

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onConnection);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  await listen(0);
  const port = (server!.address() as { port: number }).port;

  return {
    port,
    url(targetUrl: string) {
      const url = new URL(targetUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    async refuse() {
      if (mode === 'refuse') return;
      mode = 'refuse';
      // Nothing listens on the port any more: a connection attempt is refused by the kernel.
      const closed = stopListening();
      for (const pair of [...pairs]) drop(pair);
      await closed;
    },
    blackhole() {
      if (mode === 'refuse') throw new Error('restore() before black-holing a refused proxy');
      mode = 'blackhole';
      for (const pair of pairs) pair.tainted = true;
    },
    async restore() {
      if (mode === 'refuse') {
        // Listen on the same port again (a moment after closing, another process may not have it).
        for (let attempt = 0; ; attempt++) {
          try {
            await listen(port);
            break;
          } catch (error) {
            if (attempt >= 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      }
      mode = 'pass';
      for (const pair of [...pairs]) if (pair.tainted) drop(pair);
    },
    retarget(port: number) {
      target = port;
      for (const pair of [...pairs]) drop(pair);
    },
    loseAnswersAfter(pattern: RegExp) {
      for (const pair of pairs) pair.sent = '';
      return new Promise<void>((fired) => (armed = { pattern, fired }));
    },
    async close() {
      for (const pair of [...pairs]) drop(pair);
      if (mode !== 'refuse') await stopListening();
    },
  };
}

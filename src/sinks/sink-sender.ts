import { boundText } from '../common/text';
import { EventSource, octetCounted, octetFrame, ocsfJson, SealedLeaf, syslogMessage, testEvent } from './sink-events';
import { SinkFormat, SinkType } from './sink-kinds';
import { sinkTarget } from './sink-input';
import { SyslogConnection, SyslogTarget } from './syslog-connection';
import { postBatch, signature } from './webhook-sender';

/** What the Test route answers: what the receiver said. */
export interface TestReply {
  delivered: boolean;
  /** The webhook's HTTP status; null for syslog or when no answer came. */
  status: number | null;
  /** The start of the webhook's answer, or what happened (control characters removed, at most 512). */
  detail: string;
}

/** A sink's configuration with its secrets opened, as the deliverer holds it while it sends. */
export interface OpenSink {
  type: SinkType;
  url: string;
  format: SinkFormat;
  secret: string | null;
  headers: Record<string, string>;
  /** Extra trusted CA certificates (SecuritySinkCaFile), PEM. */
  ca?: string;
}

/** How one sink sends a batch: a webhook POST or syslog frames. Strategy per sink type. */
export interface SinkSender {
  /** Resolves once the receiver acknowledged the batch (webhook 2xx; syslog written and flushed). */
  send(leaves: SealedLeaf[]): Promise<void>;
  /** After a broken syslog connection: the leaf to send again from (null: nothing to resend). */
  rewind(): number | null;
  test(at: Date): Promise<TestReply>;
  close(): void;
}

const safe = (text: string) => boundText(text, 512) ?? '';

class WebhookSender implements SinkSender {
  private readonly url: URL;
  constructor(
    private readonly sink: OpenSink,
    private readonly source: EventSource,
  ) {
    this.url = new URL(sink.url);
  }

  private async post(body: Buffer, extra: Record<string, string>) {
    return postBatch(this.url, body, { ...this.sink.headers, ...extra, 'x-signature': signature(this.sink.secret ?? '', body) }, this.sink.ca);
  }

  async send(leaves: SealedLeaf[]): Promise<void> {
    // One text, one Buffer, one HMAC per batch (contract 19): no object per event (bench/RESULTS.md, issue 30).
    let text = '[';
    for (let i = 0; i < leaves.length; i++) text += (i === 0 ? '' : ',') + ocsfJson(leaves[i], this.source);
    const body = Buffer.from(`${text}]`, 'utf8');
    const reply = await this.post(body, { 'x-leaf-first': String(leaves[0].leafIndex), 'x-leaf-last': String(leaves[leaves.length - 1].leafIndex) });
    if (reply.status < 200 || reply.status > 299) throw new Error(safe(`HTTP ${reply.status}${reply.body ? `: ${reply.body}` : ''}`));
  }

  rewind(): number | null {
    return null;
  }

  async test(at: Date): Promise<TestReply> {
    try {
      const reply = await this.post(Buffer.from(JSON.stringify([testEvent(this.source, at, 'ocsf').json]), 'utf8'), {});
      return { delivered: reply.status >= 200 && reply.status <= 299, status: reply.status, detail: safe(reply.body) };
    } catch (error) {
      return { delivered: false, status: null, detail: safe((error as Error).message) };
    }
  }

  close(): void {}
}

function syslogTarget(sink: OpenSink): SyslogTarget {
  const target = sinkTarget('syslog', sink.url);
  if (target.kind !== 'syslog') throw new Error('not a syslog URL');
  return { host: target.host, port: target.port, tls: target.tls, clientPem: sink.secret ?? undefined, ca: sink.ca };
}

class SyslogSender implements SinkSender {
  private readonly connection: SyslogConnection;
  constructor(
    private readonly sink: OpenSink,
    private readonly source: EventSource,
  ) {
    this.connection = new SyslogConnection(syslogTarget(sink));
  }

  async send(leaves: SealedLeaf[]): Promise<void> {
    if (!this.connection.connected) await this.connection.connect();
    let text = '';
    for (const leaf of leaves) text += octetFrame(syslogMessage(leaf, this.source, this.sink.format));
    const frames = Buffer.from(text, 'utf8');
    await this.connection.write(leaves[0].leafIndex, frames);
  }

  rewind(): number | null {
    if (this.connection.brokenAt === null) return null;
    const from = this.connection.resendFrom();
    this.connection.close();
    return from;
  }

  async test(at: Date): Promise<TestReply> {
    const connection = new SyslogConnection(syslogTarget(this.sink));
    try {
      await connection.connect();
      await connection.write(-1, octetCounted(testEvent(this.source, at, this.sink.format).syslog));
      return { delivered: true, status: null, detail: 'written and flushed (syslog over TCP has no acknowledgement)' };
    } catch (error) {
      return { delivered: false, status: null, detail: safe((error as Error).message) };
    } finally {
      connection.close();
    }
  }

  close(): void {
    this.connection.close();
  }
}

export function senderFor(sink: OpenSink, source: EventSource): SinkSender {
  return sink.type === 'syslog' ? new SyslogSender(sink, source) : new WebhookSender(sink, source);
}

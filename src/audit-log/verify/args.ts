import { parseUnitSlashValue } from '../../config/settings';

export interface VerifyOptions {
  /** Base URL of the service, without a trailing slash: routes are `${url}/api/Audit/...`. */
  url: string;
  apiKey: string;
  /** The verifier key to trust; when absent, the one the service serves (then only self-consistency is proven). */
  verifierKey: string | null;
  /** A file of checkpoint notes saved by earlier runs: each must still be a prefix of today's log. */
  known: string | null;
  /** With it, a retention run counts only if its Cutoff is at least this many ms before its RunDate. */
  retentionMs: number | null;
}

export const USAGE =
  'usage: npm run audit:verify -- --url <base url> --api-key <key> [--verifier-key <vkey>] [--known <file>] [--retention <interval, e.g. d/30>]';

/** Parses the command line (the arguments after the script). Throws an Error saying what is wrong. */
export function parseArgs(argv: readonly string[]): VerifyOptions {
  const values = new Map<string, string>();
  const names = new Set(['--url', '--api-key', '--verifier-key', '--known', '--retention']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (!names.has(name)) throw new Error(`unknown argument ${JSON.stringify(arg)}`);
    if (values.has(name)) throw new Error(`${name} given twice`);
    let value: string | undefined;
    if (eq > 0 && arg.startsWith('--')) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i += 1;
    }
    if (value === undefined || value === '') throw new Error(`${name} needs a value`);
    values.set(name, value);
  }
  const url = values.get('--url');
  const apiKey = values.get('--api-key');
  if (!url) throw new Error('--url is required');
  if (!apiKey) throw new Error('--api-key is required');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url: not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('--url: expected an http:// or https:// URL');
  if (parsed.search || parsed.hash) throw new Error('--url: the base URL takes no query or fragment');
  const retention = values.get('--retention');
  let retentionMs: number | null = null;
  if (retention !== undefined) {
    retentionMs = parseUnitSlashValue(retention);
    if (retentionMs === null) throw new Error(`--retention: expected unit/value such as d/30 (units s, n, h, d), got ${JSON.stringify(retention)}`);
  }
  return {
    url: parsed.toString().replace(/\/+$/, ''),
    apiKey,
    verifierKey: values.get('--verifier-key') ?? null,
    known: values.get('--known') ?? null,
    retentionMs,
  };
}

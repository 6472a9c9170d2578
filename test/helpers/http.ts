/**
 * A small HTTP client over fetch that keeps cookies like a browser on one origin, and sends
 * Sec-Fetch-Site: same-origin on its requests (as a browser does for its own pages).
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly baseUrl: string,
    private readonly defaults: Record<string, string> = { 'sec-fetch-site': 'same-origin' },
  ) {}

  async request(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...this.defaults, ...options.headers };
    if (this.cookies.size > 0 && headers.cookie === undefined) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) this.absorb(line);
    const text = await response.text();
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json, setCookies: response.headers.getSetCookie() };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }
  post(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request('POST', path, { body, headers });
  }
  put(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request('PUT', path, { body, headers });
  }
  delete(path: string, headers?: Record<string, string>) {
    return this.request('DELETE', path, { headers });
  }

  private absorb(setCookie: string): void {
    const [pair, ...attributes] = setCookie.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expires = attributes.map((a) => a.trim()).find((a) => /^expires=/i.test(a));
    const maxAge = attributes.map((a) => a.trim()).find((a) => /^max-age=/i.test(a));
    const expired =
      value === '' ||
      (expires !== undefined && new Date(expires.slice(8)).getTime() <= Date.now()) ||
      (maxAge !== undefined && Number(maxAge.slice(8)) <= 0);
    if (expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

/** Parses one Set-Cookie line into its name, value and attributes (lower-cased keys). */
export function parseSetCookie(line: string): { name: string; value: string; attributes: Record<string, string | true> } {
  const [pair, ...rest] = line.split(';');
  const eq = pair.indexOf('=');
  const attributes: Record<string, string | true> = {};
  for (const part of rest) {
    const [k, ...v] = part.trim().split('=');
    attributes[k.toLowerCase()] = v.length ? v.join('=') : true;
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

import { Injectable, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

export interface WebAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The folder of hand-written front-end files (web/assets at the repository root). It is found from
 * this file's own folder, which is src/web under the tests and dist/web after `npm run build`, so the
 * pages need no build step of their own.
 */
export function assetsFolder(): string {
  return join(__dirname, '..', '..', 'web', 'assets');
}

/**
 * The static files of the pages, read once at start into memory. Only names found in the folder at
 * start can be served, so no request path ever reaches the file system (no traversal to guard).
 */
@Injectable()
export class WebAssets implements OnModuleInit {
  private readonly files = new Map<string, WebAsset>();

  onModuleInit(): void {
    const folder = assetsFolder();
    if (!existsSync(folder)) throw new Error(`web assets folder missing: ${folder}`);
    for (const name of readdirSync(folder)) {
      const contentType = CONTENT_TYPES[extname(name)];
      if (!contentType) continue;
      const body = readFileSync(join(folder, name));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      this.files.set(name, { body, contentType, etag });
    }
  }

  get(name: string): WebAsset | undefined {
    return this.files.get(name);
  }
}

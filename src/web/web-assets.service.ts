import { Injectable, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { CODE_TABLES_ASSET, codeTablesModule } from './code-tables';
import { PAGE_TABLES_ASSET, pageTablesModule } from './page-tables';

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
 * start can be served, so no request path ever reaches the file system (no traversal to guard). Two
 * assets are generated rather than read: code-tables.js, the server's code tables (decision 0024),
 * and page-tables.js, the grid pages and the menu (decision 0028).
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
      this.add(name, readFileSync(join(folder, name)), contentType);
    }
    for (const [name, generate] of [
      [CODE_TABLES_ASSET, codeTablesModule],
      [PAGE_TABLES_ASSET, () => pageTablesModule()],
    ] as const) {
      // A hand-written file of the same name would be a second copy of the tables: refuse to start.
      if (this.files.has(name)) throw new Error(`web/assets/${name} must not exist: it is generated`);
      this.add(name, Buffer.from(generate()), CONTENT_TYPES['.js']);
    }
  }

  private add(name: string, body: Buffer, contentType: string): void {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    this.files.set(name, { body, contentType, etag });
  }

  get(name: string): WebAsset | undefined {
    return this.files.get(name);
  }
}

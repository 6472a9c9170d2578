/**
 * The module the server generates at start and serves as /assets/code-tables.js (src/web/code-tables.ts,
 * decision 0024): declared for the check of web/assets, since no such file exists on disk.
 */
export interface Code {
  id: number;
  key: string;
  name: string;
  note?: string;
}

export declare const CODE_TABLES: Readonly<Record<string, readonly Code[] | undefined>>;

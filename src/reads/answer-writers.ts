import type { CopyRow } from './binary-copy';
import { ByteWriter } from './byte-writer';
import { csvField } from './csv';
import type { Keyset } from './read-sql';
import { shapeStatistics, SortedColumn } from './read-statistics';
import type { ReadTable } from './read-table';
import type { ColumnCodec } from './row-codecs';

/** The first members of each row of a JSON read's COPY: total, statistics, row number; then the columns. */
const FIRST_MEMBER = 3;

const int8Of = (row: CopyRow, i: number) => {
  const at = row.starts[i];
  return row.buffer.readInt32BE(at) * 4_294_967_296 + row.buffer.readUInt32BE(at + 4);
};

/** `{"name":` and `,"name":` for each row member, ready to copy into the answer. */
function memberKeys(table: ReadTable): Buffer[] {
  return table.columns.map((c, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`));
}

/**
 * Writes the rows of a JSON read's COPY (see jsonSql) into `out` as `{"statistics":…,"total":…,"rows":[…`:
 * each member copied from PostgreSQL's binary form by its codec, no row objects in between.
 */
export class JsonRowsWriter {
  readonly out = new ByteWriter();
  started = false;
  private readonly keys: Buffer[];
  private expected = 1;

  constructor(
    private readonly table: ReadTable,
    private readonly codecs: ColumnCodec[],
  ) {
    this.keys = memberKeys(table);
  }

  /** One COPY row; `start` is called once, on the first row, before anything is written. */
  write(row: CopyRow, start: () => void): void {
    const out = this.out;
    if (!this.started) {
      if (row.lengths[0] < 0 || row.lengths[1] < 0) throw new Error('the first row carries no count and statistics');
      const statistics = JSON.parse(row.buffer.toString('utf8', row.starts[1], row.starts[1] + row.lengths[1])) as SortedColumn[] | null;
      start();
      out.ascii(`{"statistics":`);
      out.utf8(JSON.stringify(shapeStatistics(this.table.statistics, statistics ?? [])));
      out.ascii(`,"total":${int8Of(row, 0)},"rows":[`);
      this.started = true;
    }
    if (row.lengths[2] >= 0) {
      // Rows must arrive numbered 1, 2, 3…: anything else would be a wrong answer, so it is refused.
      if (int8Of(row, 2) !== this.expected) throw new Error('rows arrived out of order');
      if (this.expected > 1) out.byte(0x2c);
      const codecs = this.codecs;
      for (let i = 0; i < codecs.length; i++) {
        const key = this.keys[i];
        out.bytes(key, 0, key.length);
        const length = row.lengths[FIRST_MEMBER + i];
        if (length < 0) out.ascii('null');
        else codecs[i].json(out, row.buffer, row.starts[FIRST_MEMBER + i], length);
      }
      out.byte(0x7d);
      this.expected++;
    }
  }
}

/** One CSV line of already-decoded cell texts. */
function csvLineOf(cells: string[], textual: (i: number) => boolean): string {
  return `${cells.map((cell, i) => csvField(cell, textual(i))).join(',')}\r\n`;
}

/** The header line of a CSV export: the column names. */
export function csvHeader(table: ReadTable): Buffer {
  return Buffer.from(csvLineOf(table.columns.map((c) => c.name), () => true));
}

/**
 * Writes one batch of a CSV export's COPY into `out`, a line per row decoded by the same codecs as
 * the JSON members, and keeps where the next batch resumes (`last`).
 */
export class CsvBatchWriter {
  readonly out = new ByteWriter();
  rows = 0;
  last: Keyset | null = null;

  constructor(
    private readonly codecs: ColumnCodec[],
    private readonly sortIndex: number,
    private readonly idIndex: number,
  ) {}

  write(row: CopyRow): void {
    const { codecs, sortIndex, idIndex } = this;
    const cells: string[] = new Array<string>(codecs.length);
    for (let i = 0; i < codecs.length; i++) {
      const length = row.lengths[i];
      cells[i] = length < 0 ? '' : csvField(codecs[i].cell(row.buffer, row.starts[i], length), codecs[i].textual);
    }
    this.out.utf8(`${cells.join(',')}\r\n`);
    this.rows++;
    const keyLength = row.lengths[sortIndex];
    this.last = {
      key: keyLength < 0 ? null : codecs[sortIndex].key(row.buffer, row.starts[sortIndex], keyLength),
      id: codecs[idIndex].key(row.buffer, row.starts[idIndex], row.lengths[idIndex]),
      keyType: codecs[sortIndex].sqlType,
    };
  }
}

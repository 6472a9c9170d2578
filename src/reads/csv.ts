/** Characters that make a spreadsheet treat a cell as a formula (or hide one behind a control). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell from its text. Text that a spreadsheet would run as a formula gets a leading
 * apostrophe (contract 9) when the column holds text; a number such as -5 is left as it is. Then the
 * cell is quoted when it holds a separator, quote or line break (RFC 4180).
 */
export function csvField(text: string, textual: boolean): string {
  const guarded = textual && FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

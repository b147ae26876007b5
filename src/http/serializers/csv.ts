import { stringify, type Options } from 'csv-stringify/sync';

/**
 * CSV as `sms/export` writes it (docs/API.md §10.9): RFC 4180 (fields separated by `,`, records
 * ended by CRLF, a field quoted with `"` when it holds a `,`, a `"` (doubled inside), a CR or an
 * LF), UTF-8, no byte order mark. The quoting is csv-stringify's, not ours.
 *
 * Formula injection: a cell that begins with `=`, `+`, `-` or `@` (and, as csv-stringify's
 * `escape_formulas` also guards, a tab, a carriage return, or the full-width `＝ ＋ － ＠` that
 * some spreadsheets read as the same) is written with a leading `'`, so that no spreadsheet runs
 * it as a formula. A number is written as it is (`-` before a number is no formula).
 */

/** `Content-Type` of a CSV answer. */
export const CSV_TYPE = 'text/csv; charset=UTF-8';

// quote_record_delimiter: a field holding a lone LF or CR is quoted too (csv-stringify would quote
// only the CRLF it writes once record_delimiter is set), so no reader takes it for a row's end.
const OPTIONS: Options = { record_delimiter: '\r\n', quote_record_delimiter: true, escape_formulas: true, eof: true };

/** A cell: text, a number, or null / undefined / `""` for an empty cell. */
export type CsvCell = string | number | null | undefined;

/** `rows` as CSV text, each record ended by CRLF; `""` for no row. */
export function csvText(rows: readonly (readonly CsvCell[])[]): string {
  if (rows.length === 0) return '';
  return stringify(rows as CsvCell[][], OPTIONS);
}

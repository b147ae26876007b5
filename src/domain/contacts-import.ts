import type { Readable } from 'node:stream';
import { parse, type CsvError, type Parser } from 'csv-parse';
import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import * as contacts from '../store/repositories/contacts.ts';
import type { NewContact } from '../store/repositories/contacts.ts';
import type { ContactFields } from '../records/contacts.ts';
import type { Db } from '../store/types.ts';
import { ForeignKeyViolation, UniqueViolation } from '../store/errors.ts';
import { ValidationFailedError } from './errors.ts';
import { CONTACT_RULES, OPT_OUT_CLEAR_MESSAGE, changesNoField } from './contacts.ts';
import type { NormalisedPhone } from './phone.ts';
import { nowSeconds } from '../lib/time.ts';
import { caseKey } from './text.ts';
import { characterLength, formatCount, messages, validate } from './validation.ts';
import { emitEvent } from './webhooks.ts';
import { recordOptOut } from './consent.ts';

/**
 * contacts/import (API.md §10.2), shared by the HTTP operation and `msgsvc contacts import`.
 *
 * Reading: the CSV is streamed through csv-parse and never held; only one batch of rows is in
 * memory. Each row is checked as it is read with the rules of contacts/create (no database).
 *
 * Writing: rows are written in batches of BATCH_ROWS, one transaction per batch, so a transaction
 * never waits for the client's bytes and other requests get the database between batches. Inside
 * a batch every check that needs the database (OptedOut 1 → 0, GroupIds of the account) runs before
 * a row's first write, so a refused row writes nothing and the batch needs no savepoints. When a
 * write fails anyway (another writer added the number or deleted a group since the batch's lookup),
 * the batch is rolled back and written again with a savepoint around each row: that row alone is
 * undone and reported. So each row commits whole or not at all, and valid rows commit when others
 * fail.
 */

/** One failed row: the file line where it starts (header = 1), the column and the message. */
export interface ImportError {
  Line: number;
  Field: string;
  Message: string;
}

/** The reply of an import (API.md §10.2). */
export interface ImportReport {
  Created: number;
  Updated: number;
  Failed: number;
  /** The first error of each failed row, in line order, at most MAX_ERRORS of them. */
  Errors: ImportError[];
}

export interface ImportOptions {
  /** Region national numbers are read in (config.defaultRegion). */
  region: CountryCode;
  /** Called after each batch with the bytes of the file parsed so far, and at the end with all it read (the CLI's progress bar). */
  onProgress?: (bytesRead: number) => void;
  /** Rows per transaction (default BATCH_ROWS). */
  batchRows?: number;
  /** The clock: current time in epoch seconds (default: the system clock, as every write uses). */
  now?: () => number;
  /**
   * Who asked for the import: the Source of the consent ledger entries it writes (src/domain/consent.ts):
   * `import` (default: an API client, or `msgsvc contacts import`) or `console` (the web console).
   */
  source?: 'import' | 'console';
}

/** At most this many errors are listed (API.md §10.2); Failed still counts every failed row. */
export const MAX_ERRORS = 1000;
/** Rows per transaction: large enough that commits cost little, small enough to hold the database briefly. */
const BATCH_ROWS = 1000;
/**
 * Longest row the parser accepts, in bytes. A longer one is a broken file (typically a quote that
 * is never closed, which would swallow the rest of the file into one field): the import stops there.
 */
export const MAX_ROW_BYTES = 1_048_576;

/** The writable fields a column may name (API.md §10.2 table). */
const FIELD_COLUMNS = new Set(['Number', 'FirstName', 'LastName', 'City', 'Email', 'Zip', 'BirthDay', 'OptedOut', 'GroupIds']);
/** Custom field entries: the rules of custom-contact-fields-entry (`fvalue`, at most 255 characters). */
const ENTRY_MAX = 255;

/** What one column of the file is. */
type Column = { kind: 'field'; name: string } | { kind: 'custom'; name: string; fieldId: number };

/** The first error of a row, with the index of its column (errors are taken in the file's column order). */
interface RowError {
  column: number;
  field: string;
  message: string;
}

/** The converted non-empty writable cells of a row. */
interface RowValues {
  FirstName?: string;
  LastName?: string;
  City?: string;
  Email?: string;
  Zip?: string;
  BirthDay?: string;
  OptedOut?: number;
  GroupIds?: number[];
}

/** A row read and checked without the database. */
interface ParsedRow {
  line: number;
  /** The Number cell as written (for `Number "…" has already been taken.`). */
  numberSent: string;
  /** Set when Number is a valid phone number. */
  phone?: NormalisedPhone;
  values: RowValues;
  /** Column index of OptedOut and GroupIds: the database errors are placed among the others by it. */
  optedOutColumn: number;
  groupIdsColumn: number;
  entries: { fieldId: number; value: string }[];
  /** The first error the rules without the database found. */
  error?: RowError;
}

/**
 * Maps the header to columns: `Number` (required), the writable fields, and the account's custom
 * fields by Name, compared as custom field names are (case-insensitively, API.md §10.4). A
 * writable field's name wins over a custom field of the same name.
 * @throws ValidationFailedError `[{"field":"file","message":"Unknown column: {name}."}]`, or
 *   `Duplicate column: {name}.` / `Missing column: Number.`
 */
function mapHeader(header: string[], customFields: { id: number; name_key: string }[]): Column[] {
  const byKey = new Map(customFields.map((f) => [f.name_key, f.id]));
  const seen = new Set<string>();
  const columns: Column[] = [];
  for (const raw of header) {
    const name = raw.trim();
    let column: Column;
    if (FIELD_COLUMNS.has(name)) column = { kind: 'field', name };
    else {
      const fieldId = byKey.get(caseKey(name));
      if (fieldId === undefined) throw fileError(`Unknown column: ${name}.`);
      column = { kind: 'custom', name, fieldId };
    }
    const key = column.kind === 'field' ? column.name : `#${column.fieldId}`;
    if (seen.has(key)) throw fileError(`Duplicate column: ${name}.`);
    seen.add(key);
    columns.push(column);
  }
  if (!seen.has('Number')) throw fileError('Missing column: Number.');
  return columns;
}

function fileError(message: string): ValidationFailedError {
  return new ValidationFailedError([{ field: 'file', message }]);
}

/** Line breaks in a record's raw text: `\r\n`, `\n` and `\r` count one each (inside quoted fields too). */
function lineBreaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) if (text.charCodeAt(i + 1) !== 10) n++;
  return n;
}

/** True for a record with nothing but empty cells (an empty line, `,,,`): no row. */
function isBlankRecord(record: string[]): boolean {
  for (const cell of record) if (cell.trim() !== '') return false;
  return true;
}

/**
 * Checks one row without the database: the cells of its columns with the rules of contacts/create.
 * Empty cells are left out (a known contact keeps those fields); a GroupIds cell is ids joined by `;`.
 * Of the errors, the one in the leftmost column is kept.
 */
function parseRow(record: string[], columns: Column[], line: number, region: CountryCode): ParsedRow {
  const row: ParsedRow = { line, numberSent: '', values: {}, optedOutColumn: -1, groupIdsColumn: -1, entries: [] };
  const input: Record<string, unknown> = {};
  const columnOf = new Map<string, number>();
  const fail = (column: number, field: string, message: string) => {
    if (!row.error || column < row.error.column) row.error = { column, field, message };
  };
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const cell = record[i] ?? '';
    if (column.kind === 'custom') {
      if (cell === '') continue;
      if (characterLength(cell) > ENTRY_MAX)
        fail(i, column.name, `${column.name} should contain at most ${formatCount(ENTRY_MAX)} characters.`);
      else row.entries.push({ fieldId: column.fieldId, value: cell });
      continue;
    }
    columnOf.set(column.name, i);
    if (column.name === 'Number') input.Number = row.numberSent = cell;
    else if (cell === '') continue;
    else if (column.name === 'GroupIds') {
      const ids = cell
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (ids.length > 0) input.GroupIds = ids;
    } else input[column.name] = cell;
  }
  if (record.length > columns.length) {
    for (let i = columns.length; i < record.length; i++) {
      if (record[i] !== '') {
        fail(i, 'file', `The row has ${formatCount(record.length)} cells; the header has ${formatCount(columns.length)}.`);
        break;
      }
    }
  }
  const checked = validate(input, CONTACT_RULES, { region });
  for (const e of checked.errors) fail(columnOf.get(e.field)!, e.field, e.message);
  const v = checked.values;
  if (v.Number) row.phone = v.Number;
  for (const key of ['FirstName', 'LastName', 'City', 'Email', 'Zip', 'BirthDay'] as const)
    if (v[key] !== undefined) row.values[key] = v[key];
  if (v.OptedOut !== undefined) {
    row.values.OptedOut = v.OptedOut;
    row.optedOutColumn = columnOf.get('OptedOut')!;
  }
  if (v.GroupIds !== undefined) {
    row.values.GroupIds = v.GroupIds;
    row.groupIdsColumn = columnOf.get('GroupIds')!;
  }
  return row;
}

/**
 * False when a row's outcome is already known without the database: it has an error, and no
 * column left of it holds a check that needs the database (a valid GroupIds, or OptedOut 0 of a
 * valid Number).
 */
function needsDatabase(row: ParsedRow): boolean {
  if (!row.error) return true;
  const before = row.error.column;
  if (row.values.GroupIds && row.groupIdsColumn < before) return true;
  return row.phone !== undefined && row.values.OptedOut === 0 && row.optedOutColumn < before;
}

/**
 * The first error of a row in the file's column order, adding the rules that need the database:
 * OptedOut 1 → 0 (`Opted Out can only be cleared by the contact texting START.`) and GroupIds all
 * the account's groups (`Group Ids is invalid.`, the same for another account's group and a missing one).
 */
function firstError(row: ParsedRow, existing: ContactFields | undefined, ownedGroups: ReadonlySet<number>): RowError | undefined {
  let error = row.error;
  const consider = (column: number, field: string, message: string) => {
    if (!error || column < error.column) error = { column, field, message };
  };
  if (existing && existing.opted_out === 1 && row.values.OptedOut === 0) consider(row.optedOutColumn, 'OptedOut', OPT_OUT_CLEAR_MESSAGE);
  if (row.values.GroupIds && row.values.GroupIds.some((id) => !ownedGroups.has(id)))
    consider(row.groupIdsColumn, 'GroupIds', messages.invalid('GroupIds'));
  return error;
}

/** A write failed in a way only a savepoint can contain: the batch is written again row by row. */
class RetryWithSavepoints extends Error {}

/** What a batch did, added to the report once its transaction committed. */
interface BatchOutcome {
  created: number;
  updated: number;
  /** Failed rows in line order. */
  failed: ImportError[];
}

/**
 * Writes one checked row; returns whether it created a contact. `known` holds the batch's contacts
 * by E.164 and is kept current, so a number repeated in the file updates the contact its first
 * row created. A known contact gets the row's non-empty cells; as with contacts/update, its
 * DateUpdated moves only when a field or its memberships change (a row that changes nothing saves
 * nothing). GroupIds replaces the memberships; each custom field cell sets that entry. A row that
 * sets OptedOut 1 on a contact that did not have it appends a consent ledger entry (`source`,
 * Detail `contacts/import`; API.md §10.2) with the row's own writes.
 */
async function writeRow(
  tx: Db,
  accountId: number,
  row: ParsedRow,
  known: Map<string, ContactFields>,
  now: number,
  source: 'import' | 'console',
): Promise<'created' | 'updated'> {
  const phone = row.phone!;
  const v = row.values;
  const existing = known.get(phone.e164);
  const next: NewContact = {
    number: existing?.number ?? phone.digits,
    e164: phone.e164,
    optedOut: v.OptedOut ?? existing?.opted_out ?? 0,
    firstName: v.FirstName ?? existing?.first_name ?? '',
    lastName: v.LastName ?? existing?.last_name ?? '',
    birthday: v.BirthDay ?? existing?.birthday ?? null,
    email: v.Email ?? existing?.email ?? '',
    zip: v.Zip ?? existing?.zip ?? '',
    city: v.City ?? existing?.city ?? '',
  };
  let id: number;
  let updatedAt = now;
  if (existing) {
    id = existing.id;
    const groupsChanged = v.GroupIds !== undefined && (await contacts.setContactGroups(tx, accountId, id, v.GroupIds));
    if (groupsChanged || !changesNoField(existing, next)) await contacts.updateContact(tx, accountId, id, next, now);
    else updatedAt = existing.updated_at;
  } else {
    id = await contacts.insertContact(tx, accountId, next, now);
    if (v.GroupIds) await contacts.setContactGroups(tx, accountId, id, v.GroupIds, false);
  }
  for (const e of row.entries) await contacts.setContactEntry(tx, accountId, e.fieldId, id, e.value, now);
  // API.md §12: OptedOut set through the API (an import row) is contact.opted_out; API.md §10.2:
  // its consent ledger entry, with the row's writes (and in its savepoint when there is one).
  if (next.optedOut === 1 && (existing?.opted_out ?? 0) !== 1) {
    await recordOptOut(tx, accountId, id, source, 'contacts/import', now);
    await emitEvent(tx, accountId, 'contact.opted_out', () => contacts.findContact(tx, accountId, id), now);
  }
  known.set(phone.e164, {
    id,
    number: next.number,
    opted_out: next.optedOut,
    first_name: next.firstName,
    last_name: next.lastName,
    birthday: next.birthday,
    email: next.email,
    zip: next.zip,
    city: next.city,
    created_at: existing?.created_at ?? now,
    updated_at: updatedAt,
  });
  return existing ? 'updated' : 'created';
}

/**
 * Writes a batch of rows (in line order) in one transaction and returns what it did. Rows whose
 * outcome is known without the database fail without one. Fast path: no savepoints (a refused row
 * is refused before it writes). When a write itself fails on a constraint, the whole batch is
 * rolled back and written again in a new transaction (its lookups read afresh) with a savepoint
 * around each row, so that row alone is undone and reported.
 */
async function writeBatch(
  store: Store,
  accountId: number,
  rows: ParsedRow[],
  clock: () => number,
  source: 'import' | 'console',
): Promise<BatchOutcome> {
  const failedRow = (row: ParsedRow, e: { field: string; message: string }): ImportError => ({
    Line: row.line,
    Field: e.field,
    Message: e.message,
  });
  if (!rows.some(needsDatabase)) return { created: 0, updated: 0, failed: rows.map((r) => failedRow(r, r.error!)) };
  const attempt = (safe: boolean) =>
    inTransaction(store, async (tx) => {
      const outcome: BatchOutcome = { created: 0, updated: 0, failed: [] };
      const numbers = new Set<string>();
      const groupIds = new Set<number>();
      for (const row of rows) {
        if (!needsDatabase(row)) continue;
        if (row.phone) numbers.add(row.phone.e164);
        if (row.values.GroupIds) for (const id of row.values.GroupIds) groupIds.add(id);
      }
      const known = numbers.size > 0 ? await contacts.findContactsByE164(tx, accountId, [...numbers]) : new Map<string, ContactFields>();
      const owned = groupIds.size > 0 ? await contacts.ownedGroupIds(tx, accountId, [...groupIds]) : new Set<number>();
      const now = clock();
      for (const row of rows) {
        const error = needsDatabase(row) ? firstError(row, row.phone && known.get(row.phone.e164), owned) : row.error;
        if (error) {
          outcome.failed.push(failedRow(row, error));
          continue;
        }
        let result: 'created' | 'updated';
        if (!safe) {
          try {
            result = await writeRow(tx, accountId, row, known, now, source);
          } catch (err) {
            if (err instanceof UniqueViolation || err instanceof ForeignKeyViolation) throw new RetryWithSavepoints();
            throw err;
          }
        } else {
          try {
            result = await contacts.inSavepoint(tx, () => writeRow(tx, accountId, row, known, now, source));
          } catch (err) {
            // Still racing another writer after a fresh lookup: this row alone fails.
            if (err instanceof UniqueViolation)
              outcome.failed.push(failedRow(row, { field: 'Number', message: messages.taken('Number', row.numberSent) }));
            else if (err instanceof ForeignKeyViolation && row.values.GroupIds)
              outcome.failed.push(failedRow(row, { field: 'GroupIds', message: messages.invalid('GroupIds') }));
            else throw err;
            continue;
          }
        }
        if (result === 'created') outcome.created++;
        else outcome.updated++;
      }
      return outcome;
    });
  try {
    return await attempt(false);
  } catch (err) {
    if (!(err instanceof RetryWithSavepoints)) throw err;
    return attempt(true);
  }
}

/** A record the parser could not read, put into its output in file order (csv-parse `on_skip`). */
interface Skipped {
  skipped: CsvError | undefined;
  raw: string;
}

/** The message of a CSV syntax error, without csv-parse's own line count. */
function csvMessage(err: CsvError | undefined): string {
  if (err?.code === 'CSV_QUOTE_NOT_CLOSED') return 'The file is not valid CSV: a quoted field is not closed.';
  if (err?.code === 'CSV_MAX_RECORD_SIZE')
    return `The file is not valid CSV: a row is longer than ${formatCount(MAX_ROW_BYTES)} bytes; the rest of the file was not read.`;
  return 'The file is not valid CSV.';
}

/**
 * Imports contacts from a CSV stream into the account (API.md §10.2).
 *
 * The first row names the columns in any order: `Number` (required), FirstName, LastName, City,
 * Email, Zip, BirthDay, OptedOut, GroupIds (ids joined by `;`), and any of the account's custom
 * fields by Name (its cell sets that contact's entry). A UTF-8 BOM is ignored. Rows are matched by
 * normalised Number: a new number creates a contact, a known one is updated with the row's
 * non-empty cells. OptedOut 1 → 0 is refused; 0 → 1 (or a new contact with 1) appends a consent
 * ledger entry (`options.source`, Detail `contacts/import`). Each row commits whole or not at all; valid rows
 * commit when others fail. Lines with only empty cells are no rows; `\r\n`, `\n` and `\r` all end
 * a line; a quote inside an unquoted cell is kept as a character.
 *
 * A row the CSV parser cannot read fails with Field `file`: a quoted field never closed (the rest of
 * the file) or a row over MAX_ROW_BYTES, after which the import stops reading.
 *
 * @returns counts and the first error of each failed row (`Line` = the file line where the row
 *   starts, the header being line 1, a quoted field spanning lines counting them all; of a row's
 *   errors, the one in its leftmost column), in line order, at most 1,000 errors.
 * @throws ValidationFailedError (422, nothing written) for an unknown, duplicate or missing
 *   column, an empty file (`File cannot be blank.`) or an unreadable header.
 * @throws whatever the stream fails with (e.g. HttpError 413 past the body limit); the batches
 *   committed before stay (importing the same file again gives the same contacts).
 */
export async function importContacts(store: Store, accountId: number, input: Readable, options: ImportOptions): Promise<ImportReport> {
  const batchRows = options.batchRows ?? BATCH_ROWS;
  const clock = options.now ?? nowSeconds;
  const report: ImportReport = { Created: 0, Updated: 0, Failed: 0, Errors: [] };
  const failRow = (error: ImportError) => {
    report.Failed++;
    if (report.Errors.length < MAX_ERRORS) report.Errors.push(error);
  };

  let bytesRead = 0;
  const parser: Parser = parse({
    bom: true,
    raw: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    relax_quotes: true,
    max_record_size: MAX_ROW_BYTES,
    skip_records_with_error: true,
    // Called synchronously while parsing: pushing here keeps the failed record in file order.
    on_skip: (err, raw) => {
      parser.push({ skipped: err, raw: raw ?? '' } satisfies Skipped);
    },
  });
  const countBytes = (chunk: Buffer | string) => {
    bytesRead += chunk.length;
  };
  const forwardError = (err: Error) => parser.destroy(err);
  input.on('data', countBytes);
  input.on('error', forwardError);
  input.pipe(parser);

  let columns: Column[] | undefined;
  let nextLine = 1; // the line where the next record starts
  // The rows read since the last batch was written, failed ones included, in line order.
  let batch: ParsedRow[] = [];

  const flush = async () => {
    const rows = batch;
    batch = [];
    if (rows.length > 0) {
      const outcome = await writeBatch(store, accountId, rows, clock, options.source ?? 'import');
      report.Created += outcome.created;
      report.Updated += outcome.updated;
      for (const e of outcome.failed) failRow(e);
    }
    options.onProgress?.(Math.min(parser.info.bytes, bytesRead));
  };

  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; raw: string } | Skipped>) {
      const line = nextLine;
      nextLine += lineBreaks(item.raw);
      if ('skipped' in item) {
        const message = csvMessage(item.skipped);
        if (!columns) throw fileError(message);
        await flush();
        failRow({ Line: line, Field: 'file', Message: message });
        if (item.skipped?.code === 'CSV_MAX_RECORD_SIZE') break;
        continue;
      }
      const { record } = item;
      if (isBlankRecord(record)) continue;
      if (!columns) {
        columns = mapHeader(record, await contacts.listCustomFieldNames(store.db, accountId));
        continue;
      }
      batch.push(parseRow(record, columns, line, options.region));
      if (batch.length >= batchRows) await flush();
    }
    if (!columns) throw fileError('File cannot be blank.');
    await flush();
    options.onProgress?.(bytesRead);
    return report;
  } finally {
    // Whatever is left unread (after a 422 or a broken row) is read and dropped, so that a stream
    // that must be consumed to its end is; a caller that would rather stop reading destroys it.
    input.off('data', countBytes);
    input.unpipe(parser);
    if (!input.readableEnded && !input.destroyed) input.resume();
    input.off('error', forwardError);
    input.on('error', () => {});
    parser.destroy();
  }
}

/**
 * The ErrorCode list (src/domain/error-codes.ts, API.md §10.9.2) holds every code the sources can
 * set, and nothing else. The sources are read, not trusted: every upper-case string literal of
 * the code that sets ErrorCodes (the dispatcher and scheduler, the carriers, the domain, the
 * store's repositories) is an entry or is named below as no ErrorCode; every `PREFIX_${…}`
 * template there has its family; every SMPP command status has its entry. A code added later
 * without its entry fails here. Then the families are checked against the functions that build
 * their codes, and `Final` against what the carriers do with each outcome.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, errorCodeEntry, errorCodeListed, FAMILY_ORDER } from '../../src/domain/error-codes.ts';
import { STATUS, receiptOutcome, statusName } from '../../src/dispatch/smpp-codec.ts';
import { permanentErrorCode } from '../../src/carriers/twilio.ts';
import { parseStatusCallback } from '../../src/carriers/callbacks.ts';
import { androidReasonCode } from '../../src/carriers/android-events.ts';
import { SANDBOX_FAILED_CODE, SANDBOX_UNDELIVERED_CODE } from '../../src/dispatch/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Where ErrorCodes are set (API.md §9.11): the loops, the domain, the SQL. */
const DIRS = ['src/dispatch', 'src/carriers', 'src/domain', 'src/store/repositories'];
const LIST = 'src/domain/error-codes.ts';

/**
 * Upper-case literals of those folders that are no ErrorCode, each with what it is. A new one
 * that is no ErrorCode either is added here, knowingly.
 */
const NOT_ERROR_CODES: Readonly<Record<string, string>> = {
  // SQLite's error code prefix, read by the retention purge to retry a busy step (src/store/repositories/retention.ts).
  SQLITE_BUSY: 'a SQLite driver error code',
  // Redis commands of the MaxPerSecond counter's Lua script (src/dispatch/send-counter.ts).
  HGET: 'a Redis command',
  HINCRBY: 'a Redis command',
  PEXPIRE: 'a Redis command',
  EXISTS: 'a Redis command',
  // The dispatcher's reason to put back a suspended account's message (API.md §16.2): it waits, no ErrorCode.
  ACCOUNT_NOT_ACTIVE: 'a reason the dispatcher holds a message, never shown',
  // Keywords of incoming texts (API.md §11.5) and of keyword reservations.
  STOP: 'an opt-out keyword',
  STOPALL: 'an opt-out keyword',
  UNSUBSCRIBE: 'an opt-out keyword',
  CANCEL: 'an opt-out keyword',
  QUIT: 'an opt-out keyword',
  START: 'an opt-in keyword',
  UNSTOP: 'an opt-in keyword',
  HELP: 'a help keyword',
  INFO: 'a help keyword',
  // RFC 5545 recurrence rules (API.md §14.3.3).
  FREQ: 'an RRULE part',
  DAILY: 'an RRULE frequency',
  WEEKLY: 'an RRULE frequency',
  MONTHLY: 'an RRULE frequency',
  YEARLY: 'an RRULE frequency',
  INTERVAL: 'an RRULE part',
  COUNT: 'an RRULE part',
  UNTIL: 'an RRULE part',
  BYDAY: 'an RRULE part',
  BYMONTHDAY: 'an RRULE part',
  // SMPP receipt states that are not final, or say delivered: they never become an ErrorCode.
  DELIVRD: 'the SMPP receipt state of a delivered message',
  ENROUTE: 'an intermediate SMPP receipt state (ignored)',
  ACCEPTD: 'an intermediate SMPP receipt state (ignored)',
  // Scheduled messages' Action Required reasons (API.md §11.7): the record never shows it, and it
  // never reaches a Message (the scheduled message stays Action Required).
  NO_MEDIA: "a scheduled MMS's check reason",
  // libphonenumber-js validation results, csv-parse error codes, the SSRF guard's socket error.
  TOO_SHORT: 'a libphonenumber-js result',
  TOO_LONG: 'a libphonenumber-js result',
  IS_POSSIBLE: 'a libphonenumber-js result',
  INVALID_LENGTH: 'a libphonenumber-js result',
  FROM_NUMBER_WITH_PLUS_SIGN: 'a libphonenumber-js option',
  CSV_MAX_RECORD_SIZE: 'a csv-parse error code',
  CSV_QUOTE_NOT_CLOSED: 'a csv-parse error code',
  EWEBHOOKFORBIDDEN: "the SSRF guard's socket error code",
  // HTTP methods, a hash, a Unicode normalisation form.
  POST: 'an HTTP method',
  PATCH: 'an HTTP method',
  DELETE: 'an HTTP method',
  HEAD: 'an HTTP method',
  SHA1: 'a hash',
  NFKC: 'a Unicode normalisation form',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))
    .filter((f) => f !== LIST);
}

/** Every upper-case string literal (4 characters or more) of the folders, with where it is. */
function literals(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/(['"])([A-Z][A-Z0-9_]{3,})\1/g)) {
      const line = text.slice(0, m.index).split('\n').length;
      (found.get(m[2]!) ?? found.set(m[2]!, []).get(m[2]!)!).push(`${relative(ROOT, join(ROOT, file))}:${line}`);
    }
  }
  return found;
}

/** The `PREFIX_` of every `PREFIX_${…}` template of the folders. */
function templatePrefixes(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/`([A-Z][A-Z0-9]*_)\$\{/g)) (found.get(m[1]!) ?? found.set(m[1]!, []).get(m[1]!)!).push(file);
  }
  return found;
}

test('every ErrorCode literal of the sources is in the list, and every other upper-case literal is named as no ErrorCode', () => {
  const found = literals();
  assert.ok(
    found.has('OPTED_OUT') && found.has('RETRIES_EXHAUSTED') && found.has('SMPP_TIMEOUT') && found.has('UNDELIV'),
    'the scan sees the sources',
  );
  const missing = [...found]
    .filter(([code]) => errorCodeListed(code) === undefined && !(code in NOT_ERROR_CODES))
    .map(([code, where]) => `${code} (${where.join(', ')})`);
  assert.deepEqual(missing, [], 'add each to src/domain/error-codes.ts, or to NOT_ERROR_CODES when it is no ErrorCode');
  // A literal named as no ErrorCode is not listed either, and the exclusions are all still used.
  for (const code of Object.keys(NOT_ERROR_CODES)) {
    assert.equal(errorCodeListed(code), undefined, `${code} is listed and excluded`);
    assert.ok(found.has(code), `${code} is no longer in the sources: drop it from NOT_ERROR_CODES`);
  }
});

test('every `PREFIX_${…}` code the sources build has its family; every SMPP command status its entry', () => {
  const prefixes = templatePrefixes();
  assert.deepEqual([...prefixes.keys()].sort(), ['ANDROID_', 'HTTP_', 'TWILIO_']);
  for (const prefix of prefixes.keys())
    assert.ok(
      ERROR_CODES.some((e) => e.code.startsWith(`${prefix}{`)),
      `${prefix}{…} (${prefixes.get(prefix)!.join(', ')}) has no family`,
    );
  for (const name of Object.keys(STATUS)) {
    assert.equal(statusName(STATUS[name as keyof typeof STATUS]), name);
    assert.ok(errorCodeListed(name), `${name} has no entry`);
  }
  assert.equal(errorCodeEntry(statusName(0x400))?.code, 'ESME_0x{hex}');
  assert.equal(errorCodeEntry(statusName(0xffffffff))?.code, 'ESME_0x{hex}');
});

test('no entry is stale: each is an SMPP status, a literal of the sources, or a code a family of theirs builds', () => {
  const found = literals();
  const prefixes = [...templatePrefixes().keys()];
  const smpp = new Set(Object.keys(STATUS));
  for (const e of ERROR_CODES) {
    if (e.code.includes('{')) continue;
    assert.ok(smpp.has(e.code) || found.has(e.code) || prefixes.some((p) => e.code.startsWith(p)), `${e.code} is set nowhere`);
  }
});

test('the list: ordered by Code, each once, a one-sentence Meaning, Final 0 or 1', () => {
  const codes = ERROR_CODES.map((e) => e.code);
  assert.deepEqual(
    codes,
    [...codes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  assert.equal(new Set(codes).size, codes.length);
  for (const e of ERROR_CODES) {
    assert.deepEqual(Object.keys(e), ['code', 'meaning', 'final']);
    assert.ok(e.final === 0 || e.final === 1, e.code);
    assert.match(e.meaning, /^[A-Z].*[^.]\.$/s, `${e.code}: a sentence`);
    assert.doesNotMatch(e.meaning.replace(/e\.g\./g, 'eg'), /[.!?] [A-Z]/, `${e.code}: one sentence`);
  }
  assert.deepEqual(FAMILY_ORDER, [
    'TWILIO_{code}',
    'HTTP_{4xx}',
    'HTTP_{5xx}',
    'HTTP_{3xx}',
    'ANDROID_{4xx}',
    'ANDROID_{5xx}',
    'ANDROID_{3xx}',
    'ESME_0x{hex}',
    '{state}:{err}',
    '{reason}',
  ]);
  for (const family of FAMILY_ORDER) assert.ok(errorCodeListed(family), family);
  assert.equal(errorCodeEntry(''), undefined);
});

test('families explain the codes the carriers build, and Final says what the dispatcher does with them', () => {
  const explain = (code: string) => {
    const e = errorCodeEntry(code);
    assert.ok(e, code);
    return [e.code, e.final];
  };
  // Twilio-compatible providers: a refusal with the provider's code, or a bare HTTP status (src/carriers/twilio.ts).
  assert.deepEqual(explain(permanentErrorCode(400, '{"code":21211,"message":"Invalid To"}')), ['TWILIO_{code}', 1]);
  assert.deepEqual(explain(permanentErrorCode(404, 'not json')), ['HTTP_{4xx}', 1]);
  assert.deepEqual(explain('HTTP_429'), ['HTTP_429', 0]);
  assert.deepEqual(explain('HTTP_503'), ['HTTP_{5xx}', 0]);
  assert.deepEqual(explain('HTTP_302'), ['HTTP_{3xx}', 0]);
  for (const code of ['HTTP_TIMEOUT', 'HTTP_CONNECTION_FAILED', 'HTTP_BAD_REPLY', 'HTTP_ADDRESS_NOT_ALLOWED'])
    assert.equal(explain(code)[1], 0, code);
  // Its status callback (src/carriers/callbacks.ts): undelivered with a code, or without.
  const receipt = (fields: Record<string, string>) => {
    const r = parseStatusCallback(fields);
    assert.equal(r.kind, 'receipt');
    return r.kind === 'receipt' ? r.receipt.errorCode : '';
  };
  assert.deepEqual(explain(receipt({ MessageSid: 'SM1', MessageStatus: 'undelivered', ErrorCode: '30003' })), ['TWILIO_{code}', 1]);
  assert.deepEqual(explain(receipt({ MessageSid: 'SM1', MessageStatus: 'failed' })), ['UNDELIV', 1]);
  // Android phones (src/carriers/android.ts, android-events.ts).
  assert.deepEqual(explain('ANDROID_400'), ['ANDROID_{4xx}', 1]);
  assert.deepEqual(explain('ANDROID_409'), ['ANDROID_409', 1]);
  for (const code of ['ANDROID_401', 'ANDROID_403', 'ANDROID_429', 'ANDROID_NOT_READY', 'ANDROID_TIMEOUT', 'ANDROID_UNREACHABLE'])
    assert.equal(explain(code)[1], 0, code);
  assert.deepEqual(explain('ANDROID_500'), ['ANDROID_{5xx}', 0]);
  assert.deepEqual(explain('ANDROID_301'), ['ANDROID_{3xx}', 0]);
  assert.deepEqual(explain(androidReasonCode('RESULT_ERROR_GENERIC_FAILURE')), ['{reason}', 1]);
  assert.deepEqual(explain(androidReasonCode('  Generic failure: no service  ')), ['{reason}', 1]);
  assert.deepEqual(explain(androidReasonCode('')), ['UNDELIV', 1]);
  // SMPP (src/dispatch/smpp.ts): throttling, a full queue and a lost bind are sent again; any other status ends it.
  for (const name of Object.keys(STATUS)) {
    const temporary = name === 'ESME_RTHROTTLED' || name === 'ESME_RMSGQFUL' || name === 'ESME_RINVBNDSTS';
    assert.deepEqual(explain(name), [name, temporary ? 0 : 1]);
  }
  for (const code of ['SMPP_NOT_BOUND', 'SMPP_TIMEOUT', 'SMPP_CONNECTION_LOST']) assert.equal(explain(code)[1], 0, code);
  assert.equal(explain('SMPP_NO_MESSAGE_ID')[1], 1);
  // SMPP receipts: a final state not delivered, alone or with the SMSC's error.
  for (const state of ['EXPIRED', 'DELETED', 'UNDELIV', 'UNKNOWN', 'REJECTD']) {
    assert.equal(receiptOutcome(state), 'undelivered');
    assert.deepEqual(explain(state), [state, 1]);
    assert.deepEqual(explain(`${state}:001`), ['{state}:{err}', 1]);
  }
  assert.deepEqual(explain('FAILED'), ['{reason}', 1], 'a state SMPP does not name');
  // The sandbox's two (API.md §11.3), the dispatcher's, the Rejected ones.
  assert.deepEqual(explain(SANDBOX_FAILED_CODE), ['ESME_RSUBMITFAIL', 1]);
  assert.deepEqual(explain(SANDBOX_UNDELIVERED_CODE), ['UNDELIV', 1]);
  for (const code of ['OPTED_OUT', 'NUMBER_INACTIVE', 'NO_CREDITS', 'NO_ROUTE', 'NO_MMS_ROUTE', 'RETRIES_EXHAUSTED'])
    assert.equal(explain(code)[1], 1, code);
  assert.equal(explain('SUBMIT_ERROR')[1], 0);
});

import { randomBytes } from 'node:crypto';
import type { Db } from '../store/types.ts';
import * as repo from '../store/repositories/personalise.ts';
import type { MergeContact } from '../store/repositories/personalise.ts';
import { messageCost, type Prices, type SmsEncoding } from './segments.ts';
import { parseMerge, renderMerge, type MergeTemplate, type MergeValues } from './merge-fields.ts';
import type { FieldError } from './errors.ts';
import { defineRules, validate } from './validation.ts';

/**
 * Personalised messages (API.md §14.3.1, §14.4.3): the text one recipient is
 * sent, its cost, and the links to store with it. Used by `send`, `send-group`, `sms/preview`,
 * the scheduler (a schedule's occurrence) and the dispatcher (an MMS template's Message).
 *
 * The merge grammar, read left to right in one pass:
 * - `{{` is a literal `{` and `}}` a literal `}` (so `{{FirstName}}` is sent as `{FirstName}` and
 *   `{{{FirstName}}}` as `{` + the first name + `}`);
 * - `{FirstName}`, `{LastName}`, `{Number}`, `{City}`, `{Zip}`, `{Email}` (names exact, case
 *   sensitive) are the recipient contact's values; `{Number}` is the contact's Number (E.164
 *   digits without `+`);
 * - `{Field:Name}` is the contact's entry of the account's custom field named Name; Name is every
 *   character up to the next `}` (at least one, no `{`), compared as custom field names are
 *   (case-insensitively, trimmed: API.md §10.4), so a field whose name holds `{` or `}` cannot be
 *   merged;
 * - every field is empty when the recipient is no contact of the account, when the contact has no
 *   such value, or (for `{Field:…}`) when the account has no such field;
 * - anything else (`{Foo}`, `{firstname}`, `{Field:}`, a lone `{` or `}`) is sent as it is.
 *
 * Choices written down here:
 * - Merging happens once, when the message is queued (or, for an MMS template's Message, when the
 *   dispatcher hands it to the carrier: the template is read then, API.md §10.7). A value that
 *   itself holds `{FirstName}` or `{{` is not read again.
 * - The 1,600-character limit of `Message` applies to the text as sent in the body; the merged
 *   text may be longer and is counted as it is.
 *
 * Tracked links (`ShortenLinks` 1, with MSGSVC_LINK_DOMAIN set), after merging:
 * - a URL starts at `http://` or `https://` (the scheme in any case), not preceded by a letter or
 *   digit, and runs to the next whitespace, `<`, `>` or `"`; then trailing `.` `,` `;` `:` `!` `?`
 *   `'` `*` are not part of it, nor a trailing `)` `]` `}` without its opening bracket inside the URL
 *   (`(see https://x.io/a)` → `https://x.io/a`; `https://x.io/wiki/A_(b)` stays whole). A URL with
 *   nothing after `://` is left alone;
 * - every URL is replaced by `{MSGSVC_LINK_DOMAIN}/l/{code}`: the same URL (exact text) twice in a
 *   message gets one code, two URLs two codes; codes are 7 characters of `A-Z a-z 0-9 - _`, each
 *   from 6 bits of a random byte (64 symbols, no modulo bias: 42 bits per code), unique over the
 *   service. On the rare clash with a stored code (the unique constraint) the link takes a fresh
 *   code and the message's text is rewritten in the same transaction (same length, same cost);
 * - `ShortenLinks` 1 without MSGSVC_LINK_DOMAIN is `Shorten Links is invalid.`; 0 is accepted. A
 *   stored request to shorten (a schedule) read after the setting was removed leaves links alone.
 * - segments and credits are counted on the text as sent (merged and shortened).
 */

/** What personalising needs beyond the store. */
export interface PersonaliseDeps {
  prices: Prices;
  /** MSGSVC_LINK_DOMAIN (absolute base URL, no trailing slash), undefined when unset. */
  linkDomain: string | undefined;
}

/** A link of a message: its code and the original URL. */
export interface TrackedLink {
  code: string;
  url: string;
}

/** One recipient's message as sent. */
export interface Personalised {
  /** The text as sent (merge fields replaced, braces unescaped, links shortened). */
  message: string;
  /** 'GSM-7' | 'UCS-2' for an SMS; undefined for an MMS. */
  encoding: SmsEncoding | undefined;
  segments: number;
  credits: number;
  /** Links to store with the message (empty unless shortenLinks). Codes are fresh random codes. */
  links: readonly TrackedLink[];
}

// The merge grammar (pure) lives in merge-fields.ts, shared with the console's counter.
export { parseMerge, renderMerge, type ContactField, type MergePart, type MergeTemplate, type MergeValues } from './merge-fields.ts';

/** The merge values of a stored contact and its entries. */
export function contactValues(c: MergeContact, entries: ReadonlyMap<string, string> = new Map()): MergeValues {
  return {
    contact: { FirstName: c.first_name, LastName: c.last_name, Number: c.number, City: c.city, Zip: c.zip, Email: c.email },
    entries,
  };
}

/**
 * The merge values of the account's contact with these digits, reading its custom field entries
 * only when the text uses `{Field:…}`; undefined when the recipient is no contact.
 */
async function readValues(db: Db, accountId: number, mobilePhone: string, t: MergeTemplate): Promise<MergeValues | undefined> {
  const contact = await repo.findMergeContact(db, accountId, `+${mobilePhone}`);
  if (!contact) return undefined;
  return contactValues(contact, await repo.contactEntries(db, accountId, contact.id, t.customKeys));
}

/**
 * A text with its merge fields replaced for one recipient, no link shortened (what the dispatcher
 * hands the carrier as an MMS template's Message, API.md §10.7). Reads the store only when the
 * text holds a merge field.
 * @param mobilePhone the recipient's digits (E.164 without +).
 */
export async function mergeFields(db: Db, accountId: number, mobilePhone: string, text: string): Promise<string> {
  const t = parseMerge(text);
  if (!t.hasFields) return t.plain;
  return renderMerge(t, await readValues(db, accountId, mobilePhone, t));
}

// ------------------------------------------------------------------ links

const URL_AT = /(?<![\p{L}\p{N}])https?:\/\/[^\s<>"]+/giu;
const TRAILING = new Set(['.', ',', ';', ':', '!', '?', "'", '*']);
const CLOSERS: Readonly<Record<string, string>> = { ')': '(', ']': '[', '}': '{' };

function count(s: string, ch: string): number {
  let k = 0;
  for (let i = s.indexOf(ch); i !== -1; i = s.indexOf(ch, i + 1)) k++;
  return k;
}

/** A URL found in a text: `[start, end)` in UTF-16 code units. */
export interface UrlSpan {
  start: number;
  end: number;
  url: string;
}

/** The `http://` and `https://` URLs of a text, where each ends (see above), in order. */
export function findUrls(text: string): UrlSpan[] {
  const out: UrlSpan[] = [];
  for (const m of text.matchAll(URL_AT)) {
    let url = m[0];
    for (;;) {
      const last = url[url.length - 1]!;
      const opener = CLOSERS[last];
      if (TRAILING.has(last) || (opener !== undefined && count(url, last) > count(url, opener))) url = url.slice(0, -1);
      else break;
    }
    const scheme = url.indexOf('://') + 3;
    if (url.length > scheme) out.push({ start: m.index, end: m.index + url.length, url });
  }
  return out;
}

const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The length of a link code (API.md §10.6): 7 characters of `CODE_ALPHABET`. */
export const LINK_CODE_LENGTH = 7;
let pool = Buffer.alloc(0);
let poolAt = 0;

/** A fresh random link code: 7 characters of `A-Z a-z 0-9 - _`, 6 bits of a random byte each. */
export function newLinkCode(): string {
  if (poolAt + LINK_CODE_LENGTH > pool.length) {
    pool = randomBytes(LINK_CODE_LENGTH * 1024);
    poolAt = 0;
  }
  let s = '';
  for (let k = 0; k < LINK_CODE_LENGTH; k++) s += CODE_ALPHABET[pool[poolAt++]! & 63];
  return s;
}

/**
 * Replaces every URL of a text by `{linkDomain}/l/{code}`, one fresh code per distinct URL.
 * @param linkDomain absolute base URL without a trailing `/`.
 */
export function shortenUrls(
  text: string,
  linkDomain: string,
  newCode: () => string = newLinkCode,
): { message: string; links: TrackedLink[] } {
  const spans = findUrls(text);
  if (spans.length === 0) return { message: text, links: [] };
  const codes = new Map<string, string>();
  const links: TrackedLink[] = [];
  let out = '';
  let at = 0;
  for (const s of spans) {
    let code = codes.get(s.url);
    if (code === undefined) {
      code = newCode();
      codes.set(s.url, code);
      links.push({ code, url: s.url });
    }
    out += `${text.slice(at, s.start)}${linkDomain}/l/${code}`;
    at = s.end;
  }
  return { message: out + text.slice(at), links };
}

// ------------------------------------------------------------------ personalise

/**
 * A merged text made final: links shortened when asked (and a link domain is set), then its cost
 * (API.md §11.1) counted on the result.
 * @param typeId 1 SMS, 2 MMS (an MMS costs the MMS price whatever its text).
 */
export function finishText(merged: string, typeId: number, deps: PersonaliseDeps, shortenLinks: boolean): Personalised {
  const { message, links } =
    shortenLinks && deps.linkDomain !== undefined ? shortenUrls(merged, deps.linkDomain) : { message: merged, links: [] };
  const cost = messageCost(typeId, message, deps.prices);
  return { message, encoding: cost.encoding, segments: cost.segments, credits: cost.credits, links };
}

/**
 * One recipient's text: reads the account's contact with these digits (and its custom field entries)
 * only when the text holds a merge field.
 * @param mobilePhone the recipient's digits (E.164 without +).
 * @param typeId 1 SMS, 2 MMS.
 * @param shortenLinks replace URLs by tracked links (ignored when `deps.linkDomain` is unset).
 */
export async function personalise(
  db: Db,
  deps: PersonaliseDeps,
  accountId: number,
  mobilePhone: string,
  text: string,
  typeId: number,
  shortenLinks: boolean,
): Promise<Personalised> {
  const t = parseMerge(text);
  const merged = t.hasFields ? renderMerge(t, await readValues(db, accountId, mobilePhone, t)) : t.plain;
  return finishText(merged, typeId, deps, shortenLinks);
}

/** `/l/{code}` where the code is whole (not followed by another code character). */
function codePattern(code: string): RegExp {
  return new RegExp(`/l/${code.replace(/[-]/g, '\\-')}(?![A-Za-z0-9_-])`, 'g');
}

/**
 * Stores links `[messageId, code, url]` of the account's queued messages (in the transaction that
 * queued them). A code already taken (the service-wide unique constraint; `on conflict do nothing`,
 * so the transaction stays usable) gets a fresh one, and its message's stored text is rewritten
 * with it. `now` in epoch seconds.
 * @returns the ids of the messages whose text was rewritten (almost always none).
 * @throws Error when no free code is found after 10 tries (never, short of a broken random source).
 */
export async function storeLinkRows(db: Db, accountId: number, rows: readonly repo.LinkRow[], now: number): Promise<number[]> {
  let refused = await repo.insertLinks(db, accountId, rows, now);
  const rewritten = new Set<number>();
  for (let attempt = 1; refused.length > 0; attempt++) {
    if (attempt > 10) throw new Error('no free link code after 10 tries');
    const retry: repo.LinkRow[] = [];
    const byMessage = new Map<number, [string, string][]>();
    for (const [messageId, code, url] of refused) {
      const fresh = newLinkCode();
      retry.push([messageId, fresh, url]);
      let list = byMessage.get(messageId);
      if (!list) byMessage.set(messageId, (list = []));
      list.push([code, fresh]);
    }
    for (const [messageId, changes] of byMessage) {
      let text = (await repo.findMessageText(db, accountId, messageId)) ?? '';
      for (const [code, fresh] of changes) text = text.replace(codePattern(code), `/l/${fresh}`);
      await repo.changeMessageText(db, accountId, messageId, text);
      rewritten.add(messageId);
    }
    refused = await repo.insertLinks(db, accountId, retry, now);
  }
  return [...rewritten];
}

/**
 * Stores a queued message's links, in the transaction that queued it (see storeLinkRows).
 * @returns true when a code clash made the message's stored text change (re-read it).
 */
export async function storeLinks(
  db: Db,
  accountId: number,
  messageId: number,
  links: readonly TrackedLink[],
  now: number,
): Promise<boolean> {
  if (links.length === 0) return false;
  const rewritten = await storeLinkRows(
    db,
    accountId,
    links.map((l) => [messageId, l.code, l.url] as const),
    now,
  );
  return rewritten.length > 0;
}

const SHORTEN_RULES = defineRules([{ field: 'ShortenLinks', rule: 'in', values: [0, 1] }]);

/**
 * Reads `ShortenLinks` of a body (API.md §10.6: 0 or 1, default 0; empty is 0): the value or the
 * 422 FieldError `Shorten Links must be an integer.` / `Shorten Links is invalid.` (also for 1 when
 * MSGSVC_LINK_DOMAIN is unset).
 */
export function readShortenLinks(
  input: Record<string, unknown>,
  linkDomain: string | undefined,
): { value: boolean } | { error: FieldError } {
  const checked = validate({ ShortenLinks: input.ShortenLinks }, SHORTEN_RULES);
  if (checked.errors.length > 0) return { error: checked.errors[0]! };
  const value = checked.values.ShortenLinks === 1;
  if (value && linkDomain === undefined) return { error: { field: 'ShortenLinks', message: 'Shorten Links is invalid.' } };
  return { value };
}

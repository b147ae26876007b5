import type { Store } from '../store/db.ts';
import * as consent from '../store/repositories/consent.ts';
import { contactExists } from '../store/repositories/contacts.ts';
import type { Db } from '../store/types.ts';
import type { ConsentRow } from '../records/consent.ts';
import { findOr404 } from './find.ts';

/**
 * The consent ledger (API.md §14.4.2 `contacts/consent`): every change of a contact's OptedOut,
 * oldest first, append-only. An entry holds the new value, its `Source` and `Detail`, the
 * `Carrier` of a keyword, and when it was made.
 *
 * Who writes it: every place that changes OptedOut appends ONE entry, with the same `Db` (the
 * open transaction) that writes the change, so the change and its entry commit or roll back
 * together:
 * - `keyword` (src/domain/inbound.ts, API.md §11.5): STOP (and the other stop words) and START
 *   (UNSTOP) from the contact; `Detail` the text received, trimmed; `Carrier` the configured name
 *   of the carrier it came through (`sandbox` for `POST /v1/sandbox/inbound` with the default
 *   settings). A STOP on a shared short code changes, and records, the contact of every account
 *   holding the number: one entry in each account whose contact changed.
 * - `api` (src/domain/contacts.ts): `contacts/create` with OptedOut 1, `contacts/update` setting
 *   it from 0 to 1; `Detail` the operation, `contacts/create` or `contacts/update`.
 * - `import` (src/domain/contacts-import.ts): a row of `contacts/import` (HTTP or
 *   `msgsvc contacts import`) that sets it; `Detail` `contacts/import`.
 * - `console`: any of those three operations requested by the web console. The server knows it
 *   by the request header `X-Msgsvc-Client: console` (CLIENT_HEADER), which the console's API
 *   client (console/src/api.ts) sends on every request; `Detail` is the operation as above.
 * A change that changes nothing adds no entry (STOP from a contact already opted out, START from
 * one who is not or from an unknown sender, OptedOut 1 sent for a contact already opted out),
 * and neither does a contact created with OptedOut 0 (by the API, an import, or a keyword text).
 * The contacts rules refuse clearing OptedOut through the API and imports, so `api`, `import`
 * and `console` entries are opt-outs (OptedOut 1); only START writes a 0.
 *
 * Append-only: nothing here updates or deletes an entry, and the database refuses both (the
 * triggers of migration 018); an entry goes only with its contact (`contacts/delete`, or the
 * deletion of its account), by the foreign key's cascade.
 *
 * Choices API.md §14.4.2 leaves open, written down here:
 * - A keyword's `Detail` keeps the case it was received in (`Stop`, `stop`, `STOP` are three
 *   writings of one word): the ledger shows what the contact sent. It is the whole text after
 *   JavaScript's trim, since a stop or start word counts only as the whole text.
 * - The header is matched without regard to ASCII case or surrounding white space
 *   (`Console` counts); any other value, or none, is the API. It is only a label of the entry: it
 *   grants nothing and changes no other rule (a client that sends it is trusted to be the console,
 *   as the entry says no more than who claimed to make the change).
 * - `DateCreated` is the time of the change (the contact's DateUpdated after it, or its
 *   DateCreated when the change is its creation).
 * - Contacts written by `msgsvc demo` and `msgsvc generate` (sample data, not a change anyone
 *   made) have no entries.
 */

/** Ids are `serial` (32-bit) on PostgreSQL: a larger one is no contact, and must not reach the query. */
const MAX_ROW_ID = 2_147_483_647;

/** The request header by which a contacts write says it comes from the web console (lower case, as Node gives headers). */
export const CLIENT_HEADER = 'x-msgsvc-client';

/** Who asked for a contacts write over HTTP: an API client, or the web console. */
export type WriteClient = 'api' | 'console';

/** The Source of an entry (API.md §14.4.2). */
export type ConsentSource = 'keyword' | 'api' | 'import' | 'console';

/**
 * The client of a request from its CLIENT_HEADER value (a string, a list when repeated, or
 * undefined): `console` when it is `console` (any ASCII case, trimmed), else `api`.
 */
export function writeClientOf(header: unknown): WriteClient {
  return typeof header === 'string' && header.trim().toLowerCase() === 'console' ? 'console' : 'api';
}

/**
 * Appends the entry of an OptedOut change made through the API or an import (to 1: those are
 * opt-outs) to the ledger of the account's contact `contactId`, in `tx`, the transaction of the
 * change. `source` is `api`, `import` or `console`; `operation` the Detail (`contacts/update`).
 * @param now epoch seconds.
 */
export async function recordOptOut(
  tx: Db,
  accountId: number,
  contactId: number,
  source: 'api' | 'import' | 'console',
  operation: string,
  now: number,
): Promise<void> {
  await consent.insertConsent(tx, accountId, contactId, { optedOut: 1, source, detail: operation, carrier: '' }, now);
}

/**
 * Appends the entry of an OptedOut change made by a keyword text (STOP: 1, START: 0) to the ledger
 * of the account's contact with this E.164 number, in `tx`, the transaction of the change.
 * @param word the text as received, trimmed.
 * @param carrier the configured name of the carrier the text came through.
 * @param now epoch seconds.
 */
export async function recordKeyword(
  tx: Db,
  accountId: number,
  e164: string,
  optedOut: 0 | 1,
  word: string,
  carrier: string,
  now: number,
): Promise<void> {
  await consent.insertConsentByE164(tx, accountId, e164, { optedOut, source: 'keyword', detail: word, carrier }, now);
}

/**
 * `contacts/consent?id=` (API.md §14.4.2): the ledger of the account's contact `id`, oldest first
 * (Id ascending), as a total and a page fetcher for ctx.paginate.
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}` when the account has no contact `id` (another
 *   account's included).
 */
export async function consentPage(
  store: Store,
  accountId: number,
  id: string,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<ConsentRow[]> }> {
  const contactId = await findOr404(id, (n) => (n > MAX_ROW_ID ? Promise.resolve(false) : contactExists(store.db, accountId, n)));
  return {
    total: await consent.countConsent(store.db, accountId, contactId),
    fetch: (limit, offset) => consent.listConsent(store.db, accountId, contactId, limit, offset),
  };
}

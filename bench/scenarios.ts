/**
 * The requests `npm run bench` sends. Each scenario is sent unchanged to the ceiling (which
 * answers everything with a constant) and to msgsvc; only msgsvc's answers are checked.
 */
import type { Request } from 'autocannon';
import { contactDigits } from '../src/domain/generate.ts';

/** What the generator reported about the database under test (see `msgsvc generate`). */
export interface Dataset {
  /** The generated account (bench/run.ts tops up its credits for the sends). */
  accountId: number;
  token: string;
  contacts: number;
  messages: number;
  activeNumber: string;
  group: { id: number; members: number };
  entry: { id: number; customFieldId: number; contactId: number };
  /** Ids of the first (up to) 1,000 contacts. */
  contactIds: number[];
}

export interface Scenario {
  name: string;
  /** What the table shows. */
  title: string;
  kind: 'read' | 'write' | 'auth';
  /** The status every msgsvc answer must have. */
  status: number;
  request(data: Dataset): Request;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const runId = Date.now().toString(36);
let counter = 0;

function tokenQuery(data: Dataset): string {
  return `access_token=${encodeURIComponent(data.token)}`;
}

/** A write whose JSON body `body()` builds anew for every request sent (fresh names, values, keywords). */
function freshJsonWrite(method: 'PUT' | 'POST', path: string, body: () => string): Request {
  return {
    method,
    path,
    headers: JSON_HEADERS,
    body: body(),
    setupRequest: (req) => {
      req.body = body();
      return req;
    },
  };
}

/** Page that the deep-page scenario asks for: 90 % of the way through the list. */
export function deepPage(messages: number): number {
  return Math.max(1, Math.floor(Math.ceil(messages / 100) * 0.9));
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'balance-json',
    title: 'credits/balance (JSON)',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/credits/balance?${tokenQuery(d)}` }),
  },
  {
    name: 'balance-xml',
    title: 'credits/balance (XML)',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/credits/balance?${tokenQuery(d)}`, headers: { accept: 'application/xml' } }),
  },
  {
    name: 'numbers-index',
    title: 'numbers/index',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/numbers/index?${tokenQuery(d)}` }),
  },
  {
    name: 'contacts-find',
    title: 'contacts/find (random contact)',
    kind: 'read',
    status: 200,
    request: (d) => {
      const q = tokenQuery(d);
      return {
        method: 'GET',
        path: `/v1/contacts/find?number=%2B${contactDigits(0)}&${q}`,
        setupRequest: (req) => {
          req.path = `/v1/contacts/find?number=%2B${contactDigits(Math.floor(Math.random() * d.contacts))}&${q}`;
          return req;
        },
      };
    },
  },
  {
    name: 'sms-page1',
    title: 'sms/single-schedule-messages page 1',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/sms/single-schedule-messages?${tokenQuery(d)}` }),
  },
  {
    name: 'sms-deep',
    title: 'sms/single-schedule-messages deep page',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/sms/single-schedule-messages?${tokenQuery(d)}&page=${deepPage(d.messages)}` }),
  },
  {
    // The console's chart (issue 24): the last 7 days by hour, 169 buckets, over the generated
    // message log (one message a minute: about 10,000 of its messages fall in the week). One
    // grouped query on messages_account_created_ix (docs/API.md §10.9). Target: p50 ≤ 50 ms.
    name: 'sms-stats',
    title: 'sms/stats (7 days by hour)',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/sms/stats?interval=hour&${tokenQuery(d)}` }),
  },
  {
    name: 'groups-update',
    title: 'groups/update',
    kind: 'write',
    status: 200,
    request: (d) => {
      const path = `/v1/groups/update?id=${d.group.id}&${tokenQuery(d)}`;
      return freshJsonWrite('PUT', path, () =>
        JSON.stringify({ fname: `Segment ${runId}-${++counter}`, fnote: 'Renamed by the benchmark' }),
      );
    },
  },
  {
    name: 'entry-update',
    title: 'custom-contact-fields-entry/update',
    kind: 'write',
    status: 200,
    request: (d) => {
      const path = `/v1/custom-contact-fields-entry/update?id=${d.entry.id}&${tokenQuery(d)}`;
      return freshJsonWrite('POST', path, () =>
        JSON.stringify({ frfield: d.entry.customFieldId, frcontact: String(d.entry.contactId), fvalue: `value ${++counter}` }),
      );
    },
  },
  {
    name: 'keyword-reserve',
    title: 'keyword/reserve (fresh keywords)',
    kind: 'write',
    status: 201,
    request: (d) => {
      const body = () =>
        JSON.stringify({ Keyword: `K${runId}${++counter}`, Number: d.activeNumber, AutoreplyMessage: 'Thanks for joining!' });
      return freshJsonWrite('POST', `/v1/keyword/reserve?${tokenQuery(d)}`, body);
    },
  },
  {
    name: 'contacts-page1',
    title: 'contacts/index page 1',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/contacts/index?${tokenQuery(d)}` }),
  },
  {
    name: 'contacts-deep',
    title: 'contacts/index deep page',
    kind: 'read',
    status: 200,
    request: (d) => ({ method: 'GET', path: `/v1/contacts/index?${tokenQuery(d)}&page=${deepPage(d.contacts)}` }),
  },
  {
    name: 'contacts-create',
    title: 'contacts/create (fresh numbers)',
    kind: 'write',
    status: 201,
    request: (d) => {
      // US numbers from a random start, one new number per request (no 422 for a taken number).
      const start = Math.floor(Math.random() * 5_000_000_000);
      const number = () => {
        const n = start + ++counter;
        return `+1${200 + (Math.floor(n / 10_000_000) % 800)}${String(n % 10_000_000).padStart(7, '0')}`;
      };
      return freshJsonWrite('POST', `/v1/contacts/create?${tokenQuery(d)}`, () =>
        JSON.stringify({ Number: number(), FirstName: 'Bench', City: 'Austin' }),
      );
    },
  },
  {
    name: 'groups-add-1000',
    title: 'groups/add-contacts (1,000 ids)',
    kind: 'write',
    status: 200,
    request: (d) => ({
      method: 'POST',
      path: `/v1/groups/add-contacts?id=${d.group.id}&${tokenQuery(d)}`,
      headers: JSON_HEADERS,
      body: JSON.stringify({ PhoneNumberIds: d.contactIds.slice(0, 1000) }),
    }),
  },
  {
    // One message to a random contact of the account (never one of the opted-out: contact i has
    // opted out when i mod 50 = 7), from its first Active number: a debit and an insert in one
    // transaction. bench/run.ts runs msgsvc with MSGSVC_DISPATCHER=0, so nothing is dispatched
    // during the measurement (bench/dispatch.ts measures the dispatcher), and sets the balance
    // high enough for every send of a run.
    name: 'sms-send',
    title: 'sms/send (random contact)',
    kind: 'write',
    status: 201,
    request: (d) => {
      const recipient = () => {
        let i = Math.floor(Math.random() * d.contacts);
        if (i % 50 === 7) i = (i + 1) % d.contacts;
        return `+${contactDigits(i)}`;
      };
      return freshJsonWrite('POST', `/v1/sms/send?${tokenQuery(d)}`, () =>
        JSON.stringify({ MobilePhone: recipient(), Message: `Your code is ${100000 + (++counter % 900000)}. Reply STOP to opt out.` }),
      );
    },
  },
  {
    name: 'unauthorized',
    title: '401 (unknown token)',
    kind: 'auth',
    status: 401,
    request: () => ({ method: 'GET', path: '/v1/credits/balance?access_token=not-a-valid-token-0000000000' }),
  },
];

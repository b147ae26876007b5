/**
 * Isolation (BOLA), property-based. Worlds of 2–4 accounts whose records are created in a random
 * interleaved order (so ids of different accounts sit next to each other), some phone numbers
 * shared between accounts, one or two tokens per account; then random operations by random
 * tokens on random targets, through every parameter that names a record: `id`, `frfield`,
 * `frcontact`, keyword `Number`, contacts/find and contacts/erase `number`, also repeated (`id=…&id=…`,
 * last wins).
 *
 * A model of who owns what predicts each outcome exactly (2xx, 404, 422 and its messages), and
 * after every request the rows of every other account are checked unchanged; reads return only
 * the caller's records. A sweep then tries every id in range with every token: exactly the
 * caller's own ids succeed, and another account's id answers byte-for-byte like an id that never
 * existed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { issueToken } from '../../src/domain/accounts.ts';
import * as accountsRepo from '../../src/store/repositories/accounts.ts';
import * as contactsRepo from '../../src/store/repositories/contacts.ts';
import * as fieldsRepo from '../../src/store/repositories/custom-fields.ts';
import * as groupsRepo from '../../src/store/repositories/groups.ts';
import * as numbersRepo from '../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';
import { openProbe, TABLES, type DbProbe } from '../helpers/reliability.ts';

// [sqlite] cases only ({ stores: ['sqlite'] }): the probe reads the SQLite file.
const seed = process.env.MSGSVC_FUZZ_SEED ? Number(process.env.MSGSVC_FUZZ_SEED) : undefined;
const WORLDS = 10;
const OPS_PER_WORLD = 150;

type Kind = 'group' | 'field' | 'contact' | 'number' | 'entry';

interface Account {
  id: number;
  tokens: string[];
  credits: number;
}

/** Who owns what, kept in step with every successful write. */
interface Model {
  accounts: Account[];
  owner: Record<Kind, Map<number, number>>; // record id → account index
  /** Contacts' E.164 numbers and numbers' digits, per account. */
  contactE164: Map<number, string>;
  numberDigits: Map<number, string>;
  /** Entry id → [field id, contact id]. */
  entryPair: Map<number, [number, number]>;
  /** `accountNumberId|keywordKey` of every reservation. */
  keywords: Set<string>;
  maxId: number;
}

const SHARED_NUMBERS = ['15550009001', '15550009002'];

const worldArb = fc.record({
  accounts: fc.integer({ min: 2, max: 4 }),
  // Records in creation order: whose (index mod accounts) and what.
  records: fc.array(fc.tuple(fc.nat(), fc.constantFrom<Kind>('group', 'field', 'contact', 'number', 'entry')), {
    minLength: 15,
    maxLength: 45,
  }),
  secondToken: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
});

interface WorldSpec {
  accounts: number;
  records: [number, Kind][];
  secondToken: boolean[];
}

async function buildWorld(ctx: TestApp, spec: WorldSpec): Promise<Model> {
  const db = ctx.store.db;
  const now = Math.floor(Date.now() / 1000);
  const model: Model = {
    accounts: [],
    owner: { group: new Map(), field: new Map(), contact: new Map(), number: new Map(), entry: new Map() },
    contactE164: new Map(),
    numberDigits: new Map(),
    entryPair: new Map(),
    keywords: new Set(),
    maxId: 0,
  };
  for (let a = 0; a < spec.accounts; a++) {
    const id = await accountsRepo.createAccount(db, `Isolation ${a}`, now);
    const credits = 1000 * (a + 1) + a;
    await accountsRepo.changeCredits(db, id, credits, 'set', now);
    const tokens = [(await issueToken(ctx.store, id)).token];
    if (spec.secondToken[a]) tokens.push((await issueToken(ctx.store, id)).token);
    model.accounts.push({ id, tokens, credits });
  }
  let serial = 0;
  const add = async (a: number, kind: Kind): Promise<void> => {
    const accountId = model.accounts[a]!.id;
    serial++;
    let id: number;
    if (kind === 'group')
      id = await groupsRepo.insertGroup(db, accountId, { name: `Group ${serial}`, note: 'note', keywordId: 0, parentId: 0 }, now);
    else if (kind === 'field') id = await fieldsRepo.insertCustomField(db, accountId, `Field ${serial}`, `field ${serial}`, now);
    else if (kind === 'number') {
      // Every account has the shared numbers too, so digits alone never tell whose a number is.
      const digits = `1555001${String(serial).padStart(4, '0')}`;
      id = await numbersRepo.insertNumber(db, accountId, digits, 0, null, now);
      model.numberDigits.set(id, digits);
    } else if (kind === 'contact') {
      const digits = `1555002${String(serial).padStart(4, '0')}`;
      id = await contactsRepo.insertContact(
        db,
        accountId,
        { number: digits, e164: `+${digits}`, optedOut: 0, firstName: 'F', lastName: 'L', birthday: null, email: '', zip: '', city: '' },
        now,
      );
      model.contactE164.set(id, `+${digits}`);
    } else {
      // An entry needs a field and a contact of the same account, on a free pair.
      const fields = [...model.owner.field].filter(([, o]) => o === a).map(([f]) => f);
      const contacts = [...model.owner.contact].filter(([, o]) => o === a).map(([c]) => c);
      const taken = new Set([...model.entryPair.values()].map(([f, c]) => `${f}|${c}`));
      const pair = fields.flatMap((f) => contacts.map((c) => [f, c] as [number, number])).find(([f, c]) => !taken.has(`${f}|${c}`));
      if (!pair) return;
      id = await fieldsRepo.insertEntry(db, accountId, pair[0], pair[1], `entry ${serial}`, now);
      model.entryPair.set(id, pair);
    }
    model.owner[kind].set(id, a);
    model.maxId = Math.max(model.maxId, id);
  };
  // Every account gets one of each kind (entries last), then the random interleaving.
  for (const kind of ['group', 'field', 'contact', 'number', 'contact', 'entry'] as Kind[])
    for (let a = 0; a < spec.accounts; a++) await add(a, kind);
  for (let a = 0; a < spec.accounts; a++) {
    for (const digits of SHARED_NUMBERS) {
      const id = await numbersRepo.insertNumber(db, model.accounts[a]!.id, digits, 0, null, now);
      model.owner.number.set(id, a);
      model.numberDigits.set(id, digits);
    }
  }
  for (const [who, kind] of spec.records) await add(who % spec.accounts, kind);
  return model;
}

/** Per-account hash of every row that carries its account_id (plus its credit balance). */
function accountFingerprints(probe: DbProbe, model: Model): string[] {
  return model.accounts.map((acc) => {
    const h = createHash('sha256');
    for (const table of TABLES) {
      if (table === 'accounts') continue;
      let rows = probe.rows<Record<string, unknown>>(`SELECT * FROM ${table} WHERE account_id = ? ORDER BY rowid`, acc.id);
      // A key's last use (API.md §15.2) is noted on every request: the account's own note, not a change.
      if (table === 'api_tokens') rows = rows.map(({ last_used_at: _u, last_ip: _i, prefix: _p, ...rest }) => rest);
      h.update(JSON.stringify(rows));
    }
    return h.digest('hex');
  });
}

interface Op {
  actor: number;
  tokenPick: number;
  /** Send a foreign token first and the actor's last (PHP: the last value wins). */
  tokenShadow: boolean;
  kind: 'group' | 'field' | 'entry' | 'keyword' | 'find' | 'erase' | 'numbers' | 'credits' | 'messages';
  /** Targets are chosen among all records of a kind (any owner), or a random id. */
  pick: number;
  pick2: number;
  pick3: number;
  randomId: number;
  useRandom: boolean;
  idShadow: boolean;
  quoted: boolean;
  method: number;
  xml: boolean;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  actor: fc.nat(),
  tokenPick: fc.nat(),
  tokenShadow: fc.boolean(),
  kind: fc.constantFrom('group', 'field', 'entry', 'entry', 'keyword', 'find', 'erase', 'numbers', 'credits', 'messages'),
  pick: fc.nat(),
  pick2: fc.nat(),
  pick3: fc.nat(),
  randomId: fc.integer({ min: 1, max: 400 }),
  useRandom: fc.nat({ max: 9 }).map((x) => x < 3),
  idShadow: fc.boolean(),
  quoted: fc.boolean(),
  method: fc.nat(),
  xml: fc.boolean(),
});

function pickFrom<T>(items: T[], n: number): T {
  return items[n % items.length]!;
}

let keywordSerial = 0;
/** Outcomes seen, `kind status` → count (reported, so a run shows both sides were exercised). */
const outcomes = new Map<string, number>();

async function runOp(ctx: TestApp, probe: DbProbe, model: Model, op: Op): Promise<void> {
  const n = model.accounts.length;
  const actor = op.actor % n;
  const account = model.accounts[actor]!;
  const token = pickFrom(account.tokens, op.tokenPick);
  const other = model.accounts[(actor + 1 + (op.pick3 % (n - 1))) % n]!;
  const tokenQuery = op.tokenShadow ? `access_token=${other.tokens[0]}&access_token=${token}` : `access_token=${token}`;
  const accept = op.xml ? 'application/xml' : 'application/json';
  const before = accountFingerprints(probe, model);
  const owns = (kind: Kind, id: number) => model.owner[kind].get(id) === actor;
  const ownOf = (kind: Kind) => [...model.owner[kind].keys()].filter((id) => owns(kind, id));
  /** A target of a kind: one of the caller's own a third of the time, else any account's (or a random id). */
  const idOf = (kind: Kind) =>
    op.useRandom ? op.randomId : pickFrom(op.pick % 3 === 0 ? ownOf(kind) : [...model.owner[kind].keys()], op.pick);
  /** `id=…`, sometimes after another account's id (the last one counts). */
  const idQuery = (id: number, kind: Kind) => {
    const decoy = pickFrom([...model.owner[kind].keys()].filter((x) => !owns(kind, x)).concat([op.randomId]), op.pick2);
    return op.idShadow ? `id=${decoy}&id=${id}` : `id=${id}`;
  };
  const send = (method: string, path: string, query: string, body?: unknown) =>
    ctx.app.inject({
      method: method as 'GET',
      url: `${path}?${query}&${tokenQuery}`,
      headers: { accept, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  const int = (v: number) => (op.quoted ? String(v) : v);
  let expectChange = false;
  let found = false;
  const where = `${op.kind} by account ${actor}`;

  if (op.kind === 'group' || op.kind === 'field') {
    const kind: Kind = op.kind;
    const id = idOf(kind);
    const path = kind === 'group' ? '/v1/groups/update' : '/v1/custom-contact-fields/update';
    const res = await send(pickFrom(['PUT', 'PATCH'], op.method), path, idQuery(id, kind), {
      fname: kind === 'field' ? `Renamed ${op.pick2} #${id}` : `Renamed ${op.pick2}`,
    });
    if (owns(kind, id)) {
      assert.equal(res.statusCode, 200, `${where}: own ${kind} ${id} → 200: ${res.body}`);
      expectChange = true;
    } else {
      assert.equal(res.statusCode, 404, `${where}: ${kind} ${id} not its own → 404: ${res.body}`);
      assert.ok(res.body.includes(`Object not found: ${id}`), res.body);
    }
  } else if (op.kind === 'entry') {
    const id = idOf('entry');
    const fieldId =
      op.useRandom && op.idShadow ? op.randomId : pickFrom(op.pick2 % 2 === 0 ? ownOf('field') : [...model.owner.field.keys()], op.pick2);
    const contactId = pickFrom(op.pick3 % 2 === 0 ? ownOf('contact') : [...model.owner.contact.keys()], op.pick3);
    const res = await send(pickFrom(['POST', 'PUT', 'PATCH'], op.method), '/v1/custom-contact-fields-entry/update', idQuery(id, 'entry'), {
      frfield: int(fieldId),
      frcontact: int(contactId),
      fvalue: `v${op.pick}`,
    });
    if (!owns('entry', id)) {
      assert.equal(res.statusCode, 404, `${where}: entry ${id} not its own → 404: ${res.body}`);
    } else {
      const errors: { field: string; message: string }[] = [];
      if (!owns('field', fieldId)) errors.push({ field: 'frfield', message: 'Frfield is invalid.' });
      if (!owns('contact', contactId)) errors.push({ field: 'frcontact', message: 'Frcontact is invalid.' });
      const holder = [...model.entryPair].find(([e, [f, c]]) => e !== id && f === fieldId && c === contactId);
      if (errors.length === 0 && holder) {
        errors.push({
          field: 'frfield',
          message: `The combination "${fieldId}"-"${contactId}" of Frfield and Frcontact has already been taken.`,
        });
      }
      if (errors.length > 0) {
        assert.equal(res.statusCode, 422, `${where}: entry ${id} with field ${fieldId} / contact ${contactId}: ${res.body}`);
        if (!op.xml) assert.deepEqual(JSON.parse(res.body), errors);
      } else {
        assert.equal(res.statusCode, 200, `${where}: own entry ${id}, own field ${fieldId}, own contact ${contactId}: ${res.body}`);
        model.entryPair.set(id, [fieldId, contactId]);
        expectChange = true;
      }
    }
  } else if (op.kind === 'keyword') {
    const numberId = pickFrom([...model.owner.number.keys()], op.pick);
    const digits = model.numberDigits.get(numberId)!;
    // The actor's own row with these digits, if it has one (shared digits exist in every account).
    const ownRow = [...model.numberDigits].find(([id, d]) => d === digits && owns('number', id))?.[0];
    const keyword = `KEYW${++keywordSerial}`;
    const res = await send('POST', '/v1/keyword/reserve', 'x=1', { Keyword: keyword, Number: op.quoted ? digits : Number(digits) });
    if (ownRow === undefined) {
      assert.equal(res.statusCode, 422, `${where}: number ${digits} not its own → 422: ${res.body}`);
      if (!op.xml) assert.deepEqual(JSON.parse(res.body), [{ field: 'Number', message: 'Number is invalid.' }]);
    } else {
      assert.equal(res.statusCode, 201, `${where}: own number ${digits} → 201: ${res.body}`);
      const stored = probe.rows<{ account_id: number; account_number_id: number }>(
        'SELECT account_id, account_number_id FROM keyword_reservations WHERE keyword = ?',
        keyword,
      );
      assert.deepEqual(stored, [{ account_id: account.id, account_number_id: ownRow }], 'reserved on the caller’s own number row');
      expectChange = true;
    }
  } else if (op.kind === 'find') {
    const contactId = idOf('contact');
    if (!model.contactE164.has(contactId)) return;
    const e164 = model.contactE164.get(contactId)!;
    const res = await send('GET', '/v1/contacts/find', `number=${encodeURIComponent(op.quoted ? e164 : e164.slice(1))}`);
    if (owns('contact', contactId)) {
      found = true;
      assert.equal(res.statusCode, 200, `${where}: own contact → 200: ${res.body}`);
      if (!op.xml) assert.equal(JSON.parse(res.body).Id, contactId);
    } else {
      assert.equal(res.statusCode, 404, `${where}: another account's contact → 404: ${res.body}`);
    }
  } else if (op.kind === 'erase') {
    // API.md §10.2.1: 204 whoever's number it is; only the caller's own contact goes, and no other
    // account's row changes. The other kinds need each account to keep a contact and its entries:
    // a contact is erased only when its account has another, and when no entry is its.
    const contactId = idOf('contact');
    if (!model.contactE164.has(contactId)) return;
    const own = owns('contact', contactId);
    if (own && (ownOf('contact').length <= 1 || [...model.entryPair.values()].some(([, c]) => c === contactId))) return;
    const e164 = model.contactE164.get(contactId)!;
    const res = await send('DELETE', '/v1/contacts/erase', `number=${encodeURIComponent(op.quoted ? e164 : e164.slice(1))}`);
    assert.equal(res.statusCode, 204, `${where}: erase ${e164} → 204: ${res.body}`);
    if (own) {
      expectChange = true;
      model.owner.contact.delete(contactId);
      model.contactE164.delete(contactId);
      const stored = probe.rows<{ id: number }>('SELECT id FROM contacts WHERE id = ?', contactId);
      assert.deepEqual(stored, [], `${where}: own contact ${contactId} erased`);
    } else {
      assert.equal(probe.rows('SELECT id FROM contacts WHERE id = ?', contactId).length, 1, `${where}: another account's contact stays`);
    }
  } else {
    const path =
      op.kind === 'numbers' ? '/v1/numbers/index' : op.kind === 'credits' ? '/v1/credits/balance' : '/v1/sms/single-schedule-messages';
    const res = await send('GET', path, 'per-page=100');
    assert.equal(res.statusCode, 200, res.body);
    if (!op.xml) {
      const body = JSON.parse(res.body);
      if (op.kind === 'credits') assert.deepEqual(body, { AvailableCredits: account.credits });
      if (op.kind === 'numbers') {
        const own = [...model.numberDigits]
          .filter(([id]) => owns('number', id))
          .map(([, d]) => d)
          .sort();
        assert.deepEqual(body.map((r: { Number: string }) => r.Number).sort(), own, 'numbers/index lists exactly the caller’s numbers');
      }
      if (op.kind === 'messages') assert.deepEqual(body, [], 'no account here has messages; none leak in');
    }
  }

  const after = accountFingerprints(probe, model);
  const outcome = `${op.kind}:${['numbers', 'credits', 'messages'].includes(op.kind) ? 'read' : expectChange || found ? 'own' : 'refused'}`;
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  for (let a = 0; a < n; a++) {
    if (a === actor && expectChange) continue;
    assert.equal(after[a], before[a], `${where}: account ${a}'s rows are unchanged`);
  }
}

storeTest('BOLA: random accounts, interleaved ids and random operations never cross accounts', { stores: ['sqlite'] }, async (t) => {
  let requests = 0;
  await fc.assert(
    fc.asyncProperty(worldArb, fc.array(opArb, { minLength: OPS_PER_WORLD, maxLength: OPS_PER_WORLD }), async (spec, ops) => {
      const ctx = await buildTestApp(undefined, { MSGSVC_RATE_LIMIT: '1000000' });
      const probe = openProbe(ctx.dbPath);
      try {
        const model = await buildWorld(ctx, spec);
        for (const op of ops) {
          await runOp(ctx, probe, model, op);
          requests++;
        }
      } finally {
        probe.close();
        await ctx.close();
      }
    }),
    { numRuns: WORLDS, endOnFailure: true, includeErrorInReport: true, ...(seed !== undefined ? { seed } : {}) },
  );
  t.diagnostic(
    `${WORLDS} worlds, ${requests} requests; ${[...outcomes]
      .sort()
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
  );
  for (const kind of ['group', 'field', 'entry', 'keyword', 'find', 'erase']) {
    assert.ok(outcomes.get(`${kind}:own`), `some ${kind} writes were the caller's own`);
    assert.ok(outcomes.get(`${kind}:refused`), `some ${kind} writes were refused`);
  }
});

storeTest(
  'BOLA: ids are not guessable into success; a foreign id answers exactly like a missing one',
  { stores: ['sqlite'] },
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_RATE_LIMIT: '1000000' });
    const model = await buildWorld(ctx, {
      accounts: 3,
      records: fc.sample(worldArb, { numRuns: 1, ...(seed !== undefined ? { seed } : {}) })[0]!.records,
      secondToken: [true, false, true, false],
    });
    const probe = openProbe(ctx.dbPath);
    t.after(() => probe.close());
    const ops = [
      { kind: 'group' as Kind, method: 'PUT', path: '/v1/groups/update', body: (_id: number) => ({ fname: 'Guessed name' }) },
      {
        kind: 'field' as Kind,
        method: 'PATCH',
        path: '/v1/custom-contact-fields/update',
        body: (id: number) => ({ fname: `Guessed field #${id}` }),
      },
      {
        kind: 'entry' as Kind,
        method: 'POST',
        path: '/v1/custom-contact-fields-entry/update',
        // The entry's own current pair, so that an own entry always succeeds.
        body: (id: number) => {
          const pair = model.entryPair.get(id);
          return pair ? { frfield: pair[0], frcontact: pair[1], fvalue: 'guessed' } : { frfield: 1, frcontact: 1, fvalue: 'guessed' };
        },
      },
    ];
    let requests = 0;
    const top = model.maxId + 25;
    const send = (op: (typeof ops)[number], id: number, token: string) =>
      ctx.app.inject({
        method: op.method as 'PUT',
        url: `${op.path}?id=${id}&access_token=${token}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(op.body(id)),
      });
    const headerNames = (res: { headers: Record<string, unknown> }) => Object.keys(res.headers).sort().join(',');
    for (const [a, account] of model.accounts.entries()) {
      for (const token of account.tokens) {
        for (const op of ops) {
          const before = accountFingerprints(probe, model);
          // What an id that no account has looks like.
          const never = await send(op, 999_999, token);
          assert.equal(never.statusCode, 404);
          let successes = 0;
          for (let id = -1; id <= top; id++) {
            const res = await send(op, id, token);
            requests++;
            if (model.owner[op.kind].get(id) === a) {
              assert.equal(res.statusCode, 200, `own ${op.kind} ${id}: ${res.body}`);
              successes++;
              continue;
            }
            // Another account's id (or none): the same status, body and headers as a missing id.
            assert.equal(res.statusCode, 404, `${op.kind} ${id} of another account (or none) → 404: ${res.body}`);
            assert.equal(res.body, JSON.stringify({ name: 'Not Found', message: `Object not found: ${id}`, code: 0, status: 404 }));
            assert.equal(headerNames(res), headerNames(never), `${op.kind} ${id}: the same headers as a missing id`);
          }
          assert.equal(
            successes,
            [...model.owner[op.kind].values()].filter((o) => o === a).length,
            `account ${a} reaches exactly its own ${op.kind}s`,
          );
          const after = accountFingerprints(probe, model);
          for (let b = 0; b < model.accounts.length; b++)
            if (b !== a) assert.equal(after[b], before[b], `account ${b} unchanged by account ${a}'s sweep`);
        }
      }
    }
    t.diagnostic(`${requests} sweep requests over ids -1..${top}`);
  },
);

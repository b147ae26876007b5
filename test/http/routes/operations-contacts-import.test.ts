/**
 * contacts/import (API.md §10.2; issue 10 "CSV import" and "Tests"): every rule of the
 * import in JSON and XML over app.inject, and once over a real socket. The oracle is the CSV text
 * and the raw database rows, never the server's own mappers:
 * - header in any order; Number required; the writable fields; GroupIds ids joined by `;`;
 *   custom field columns by Name setting that contact's entry;
 * - an unknown column: 422 `[{"field":"file","message":"Unknown column: {name}."}]`, nothing written;
 * - rows matched by normalised Number: new → created, known → the row's non-empty cells;
 * - each row whole or not at all, valid rows commit when others fail (also when a write fails
 *   on a constraint: the savepoint fallback);
 * - OptedOut 1 → 0 refused; another account's group `Group Ids is invalid.` as a missing one;
 * - the reply `{"Created","Updated","Failed","Errors"}`, `Line` = the file's line (header 1,
 *   a quoted field spanning lines counting its lines), the first error of each failed row in the
 *   file's column order, at most 1,000 errors; a BOM ignored;
 * - its own body limit (413 beyond, nothing written), 415 for another media type.
 */
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../../src/config.ts';
import { importContacts } from '../../../src/domain/contacts-import.ts';
import { createAccount, issueToken } from '../../../src/domain/accounts.ts';
import { caseKey } from '../../../src/domain/text.ts';
import { insertCustomField } from '../../../src/store/repositories/custom-fields.ts';
import { insertGroup } from '../../../src/store/repositories/groups.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  assertError,
  assertXmlLayout,
  contactFromDb,
  fmtTime,
  isXml,
  JSON_TYPE,
  nowSeconds,
  snapshotAccount,
  UNUSED_ID,
  urlOf,
  WIRES,
  XML_TYPE,
  xmlDocument,
  type Wire,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const IMPORT = '/v1/contacts/import';
const OPT_OUT = 'Opted Out can only be cleared by the contact texting START.';

/** An account with a token, two groups and two custom fields ("Loyalty Tier", "Favourite Colour"). */
interface Fixture {
  account: number;
  token: string;
  groupA: number;
  groupB: number;
  tier: number;
  colour: number;
}

let fixtures = 0;
async function fixture(ctx: TestApp): Promise<Fixture> {
  const account = await createAccount(ctx.store, `Importer ${++fixtures}`);
  const { token } = await issueToken(ctx.store, account, 'test');
  const now = nowSeconds();
  const group = (name: string) => insertGroup(ctx.store.db, account, { name, note: '', keywordId: 0, parentId: 0 }, now);
  const field = (name: string) => insertCustomField(ctx.store.db, account, name, caseKey(name), now);
  return {
    account,
    token,
    groupA: await group('Group A'),
    groupB: await group('Group B'),
    tier: await field('Loyalty Tier'),
    colour: await field('Favourite Colour'),
  };
}

interface ImportOptions {
  wire?: Wire;
  /** Content-Type header; null sends none. Default text/csv. */
  contentType?: string | null;
  headers?: Record<string, string>;
}

function importCsv(ctx: TestApp, token: string, body: string | Buffer | undefined, o: ImportOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { accept: o.wire === 'xml' ? 'application/xml' : 'application/json', ...o.headers };
  if (o.contentType !== null) headers['content-type'] = o.contentType ?? 'text/csv';
  return ctx.app.inject({
    method: 'POST',
    url: urlOf({ path: IMPORT, token, ...(o.wire ? { wire: o.wire } : {}) }),
    headers,
    ...(body !== undefined ? { payload: body } : {}),
  });
}

interface Report {
  Created: number;
  Updated: number;
  Failed: number;
  Errors: { Line: number; Field: string; Message: string }[];
}
const report = (Created: number, Updated: number, errors: [number, string, string][] = [], Failed = errors.length): Report => ({
  Created,
  Updated,
  Failed,
  Errors: errors.map(([Line, Field, Message]) => ({ Line, Field, Message })),
});

/** A contact as the database holds it (the Contact record from raw rows), with its entries by field id. */
type Stored = Awaited<ReturnType<typeof contactFromDb>> & { entries: Record<number, string> };

/** The account's contacts by Number (E.164 digits). */
async function contactsOf(ctx: TestApp, account: number): Promise<Map<string, Stored>> {
  const db = ctx.store.db;
  const rows = await db.selectFrom('contacts').select(['id', 'number']).where('account_id', '=', account).orderBy('id').execute();
  const out = new Map<string, Stored>();
  for (const r of rows) {
    const entries: Record<number, string> = {};
    for (const e of await db
      .selectFrom('custom_field_entries')
      .select(['custom_field_id', 'entry'])
      .where('contact_id', '=', r.id)
      .execute())
      entries[e.custom_field_id] = e.entry;
    out.set(r.number, { ...(await contactFromDb(ctx, r.id)), entries });
  }
  return out;
}

/** The writable part of a stored contact (what an import sets). */
function fieldsOf(c: Stored | undefined) {
  assert.ok(c, 'contact exists');
  const { Number, OptedOut, FirstName, LastName, BirthDay, Email, Zip, City, GroupIds, entries } = c;
  return { Number, OptedOut, FirstName, LastName, BirthDay, Email, Zip, City, GroupIds, entries };
}

const blank = {
  OptedOut: 0,
  FirstName: '',
  LastName: '',
  BirthDay: '0000-00-00',
  Email: '',
  Zip: '',
  City: '',
  GroupIds: [] as number[],
  entries: {},
};

// ------------------------------------------------------------------ columns and writable fields

storeTest('import: header in any order, every writable field, GroupIds joined by ";", custom fields by Name (JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const before = nowSeconds();
    const csv =
      'City,loyalty TIER,GroupIds,Number,FirstName,LastName,Email,Zip,BirthDay,OptedOut,Favourite Colour\n' +
      `Austin,Gold,${f.groupB};${f.groupA},+1 555 010 2001,Ann,Lee,ann@example.com,78701,1990-02-28,0,\n` +
      `,,,(555) 010-2002,Bob,,,,,1,Blue\n` +
      `"Salt Lake City",,  ${f.groupA} ; ,15550102003,"Dwayne ""The Rock""",O'Brien,,02108,,,"Green, light"\n`;
    const res = await importCsv(ctx, f.token, csv, { wire });
    assertBody(res, wire, 200, report(3, 0));
    const after = nowSeconds();
    const all = await contactsOf(ctx, f.account);
    assert.equal(all.size, 3);
    assert.deepEqual(fieldsOf(all.get('15550102001')), {
      ...blank,
      Number: '15550102001',
      FirstName: 'Ann',
      LastName: 'Lee',
      BirthDay: '1990-02-28',
      Email: 'ann@example.com',
      Zip: '78701',
      City: 'Austin',
      GroupIds: [f.groupA, f.groupB],
      entries: { [f.tier]: 'Gold' },
    });
    assert.deepEqual(fieldsOf(all.get('15550102002')), {
      ...blank,
      Number: '15550102002',
      OptedOut: 1,
      FirstName: 'Bob',
      entries: { [f.colour]: 'Blue' },
    });
    assert.deepEqual(fieldsOf(all.get('15550102003')), {
      ...blank,
      Number: '15550102003',
      FirstName: 'Dwayne "The Rock"',
      LastName: "O'Brien",
      Zip: '02108',
      City: 'Salt Lake City',
      GroupIds: [f.groupA],
      entries: { [f.colour]: 'Green, light' },
    });
    for (const c of all.values()) {
      assert.equal(c.DateCreated, c.DateUpdated);
      assert.ok(c.DateCreated >= fmtTime(before) && c.DateCreated <= fmtTime(after), c.DateCreated);
    }
  }
});

storeTest('import: a header with only Number works; a header-only file imports nothing', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    assertBody(await importCsv(ctx, f.token, 'Number\n+15550109001\n15550109002', { wire }), wire, 200, report(2, 0));
    assertBody(await importCsv(ctx, f.token, 'FirstName,Number\n', { wire }), wire, 200, report(0, 0));
    assert.deepEqual([...(await contactsOf(ctx, f.account)).keys()], ['15550109001', '15550109002']);
  }
});

storeTest('import: an unknown column rejects the whole file before anything is written (422, JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const other = await fixture(ctx);
  const otherField = 'Only Elsewhere';
  await insertCustomField(ctx.store.db, other.account, otherField, caseKey(otherField), nowSeconds());
  // Existing data that an import would touch.
  assertBody(await importCsv(ctx, f.token, 'Number,FirstName\n+15550103001,Ann\n'), 'json', 200, report(1, 0));
  const before = await snapshotAccount(ctx, f.account);
  const good = '+15550103001,Changed,x\n+15550103002,New,y\n';
  const cases: { name: string; csv: string | Buffer | undefined; message: string }[] = [
    { name: 'unknown column', csv: `Number,FirstName,Nickname\n${good}`, message: 'Unknown column: Nickname.' },
    { name: 'unknown column first', csv: `Foo,Number,FirstName\n${good}`, message: 'Unknown column: Foo.' },
    // Another account's custom field is unknown here, exactly like one that exists nowhere.
    { name: "another account's custom field", csv: `Number,FirstName,${otherField}\n${good}`, message: `Unknown column: ${otherField}.` },
    { name: 'a field name in the wrong case', csv: `number,FirstName,Zip\n${good}`, message: 'Unknown column: number.' },
    { name: 'an empty column name', csv: `Number,,FirstName\n${good}`, message: 'Unknown column: .' },
    { name: 'duplicate column', csv: `Number,FirstName,FirstName\n${good}`, message: 'Duplicate column: FirstName.' },
    {
      name: 'duplicate custom field (any case)',
      csv: `Number,Loyalty Tier,LOYALTY TIER\n${good}`,
      message: 'Duplicate column: LOYALTY TIER.',
    },
    { name: 'no Number column', csv: 'FirstName,Email\nAnn,a@example.com\n', message: 'Missing column: Number.' },
    { name: 'empty file', csv: '', message: 'File cannot be blank.' },
    { name: 'no body', csv: undefined, message: 'File cannot be blank.' },
    { name: 'only a BOM and blank lines', csv: Buffer.from('\uFEFF\n\r\n,,\n'), message: 'File cannot be blank.' },
    { name: 'an unreadable header', csv: 'Number,"FirstName\n', message: 'The file is not valid CSV: a quoted field is not closed.' },
  ];
  for (const c of cases) {
    for (const wire of WIRES) {
      const res = await importCsv(ctx, f.token, c.csv, { wire });
      try {
        assert422(res, [{ field: 'file', message: c.message }], wire);
      } catch (err) {
        (err as Error).message = `case "${c.name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, f.account), before, 'a rejected file writes nothing');
});

// ------------------------------------------------------------------ matching and updates

storeTest("import: a known number (any writing) is updated with the row's non-empty cells only (JSON, XML)", async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const header = 'Number,FirstName,LastName,Email,Zip,City,BirthDay,OptedOut,GroupIds,Loyalty Tier,Favourite Colour\n';
    assertBody(
      await importCsv(ctx, f.token, `${header}+15550104001,Ann,Lee,ann@example.com,78701,Austin,1990-02-28,0,${f.groupA},Gold,Red\n`),
      'json',
      200,
      report(1, 0),
    );
    const first = (await contactsOf(ctx, f.account)).get('15550104001')!;
    // Another writing of the same number; empty cells keep their fields, GroupIds replaces.
    const res = await importCsv(ctx, f.token, `${header}(555) 010-4001,Anna,,,,Boston,,1,${f.groupB},Silver,\n`, { wire });
    assertBody(res, wire, 200, report(0, 1));
    const all = await contactsOf(ctx, f.account);
    assert.equal(all.size, 1);
    const updated = all.get('15550104001')!;
    assert.deepEqual(fieldsOf(updated), {
      ...fieldsOf(first),
      FirstName: 'Anna',
      City: 'Boston',
      OptedOut: 1,
      GroupIds: [f.groupB],
      entries: { [f.tier]: 'Silver', [f.colour]: 'Red' },
    });
    assert.equal(updated.Id, first.Id);
    assert.equal(updated.DateCreated, first.DateCreated);
    assert.ok(updated.DateUpdated >= first.DateUpdated);
    // A row with only its Number changes no field (and keeps the memberships).
    assertBody(await importCsv(ctx, f.token, 'GroupIds,Number\n,+15550104001\n', { wire }), wire, 200, report(0, 1));
    assert.deepEqual(fieldsOf((await contactsOf(ctx, f.account)).get('15550104001')), fieldsOf(updated));
  }
});

storeTest(
  "import: a row whose every cell equals the stored value leaves DateUpdated (the contact's and the entry's); a change moves it",
  async (t) => {
    const ctx = await buildTestApp(t);
    const f = await fixture(ctx);
    const PAST = 1_000_000_000;
    const header = 'Number,FirstName,City,GroupIds,Loyalty Tier\n';
    assertBody(await importCsv(ctx, f.token, `${header}+15550106001,Ann,Austin,${f.groupA};${f.groupB},Gold\n`), 'json', 200, report(1, 0));
    const id = (await contactsOf(ctx, f.account)).get('15550106001')!.Id;
    const past = async () => {
      await ctx.store.db.updateTable('contacts').set({ updated_at: PAST }).where('id', '=', id).execute();
      await ctx.store.db.updateTable('custom_field_entries').set({ updated_at: PAST }).where('contact_id', '=', id).execute();
    };
    const entryUpdated = async () =>
      Number(
        (await ctx.store.db.selectFrom('custom_field_entries').select('updated_at').where('contact_id', '=', id).executeTakeFirstOrThrow())
          .updated_at,
      );
    // The same cells (groups in another order, the number in another writing), or only the number.
    for (const csv of [`${header}(555) 010-6001,Ann,Austin,${f.groupB};${f.groupA},Gold\n`, 'Number\n15550106001\n']) {
      await past();
      assertBody(await importCsv(ctx, f.token, csv), 'json', 200, report(0, 1));
      assert.equal((await contactFromDb(ctx, id)).DateUpdated, fmtTime(PAST), `${csv}: the contact is not saved`);
      assert.equal(await entryUpdated(), PAST, `${csv}: the entry is not saved`);
    }
    // A changed field, a changed membership, a changed entry.
    for (const [csv, contactMoves] of [
      [`Number,City\n15550106001,Boston\n`, true],
      [`Number,GroupIds\n15550106001,${f.groupA}\n`, true],
      [`Number,Loyalty Tier\n15550106001,Silver\n`, false],
    ] as const) {
      await past();
      const before = nowSeconds();
      assertBody(await importCsv(ctx, f.token, csv), 'json', 200, report(0, 1));
      const contact = await contactFromDb(ctx, id);
      if (contactMoves) assert.ok(contact.DateUpdated >= fmtTime(before), `${csv}: the contact's DateUpdated moves`);
      else {
        assert.equal(contact.DateUpdated, fmtTime(PAST), `${csv}: an entry is its own record`);
        assert.ok((await entryUpdated()) >= before, `${csv}: the entry's DateUpdated moves`);
      }
    }
  },
);

storeTest('import: a number repeated in one file creates the contact, then updates it', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const csv = `Number,FirstName,City,GroupIds\n+15550105001,Ann,Austin,${f.groupA}\n15550105001,Anna,,${f.groupB}\n5550105001,,Boston,\n`;
    assertBody(await importCsv(ctx, f.token, csv, { wire }), wire, 200, report(1, 2));
    const all = await contactsOf(ctx, f.account);
    assert.equal(all.size, 1);
    assert.deepEqual(fieldsOf(all.get('15550105001')), {
      ...blank,
      Number: '15550105001',
      FirstName: 'Anna',
      City: 'Boston',
      GroupIds: [f.groupB],
    });
  }
});

// ------------------------------------------------------------------ failed rows

storeTest('import: a file with a bad row in the middle commits the others; a failed row writes nothing of itself', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const other = await fixture(ctx);
    assertBody(await importCsv(ctx, f.token, 'Number,FirstName,OptedOut\n+15550106009,Known,1\n'), 'json', 200, report(1, 0));
    const known = (await contactsOf(ctx, f.account)).get('15550106009')!;
    const csv =
      'Number,FirstName,Email,GroupIds,Loyalty Tier,OptedOut\n' +
      `+15550106001,Ann,ann@example.com,${f.groupA},Gold,\n` + // 2
      `+15550106002,Bob,not-an-email,${f.groupA},Gold,\n` + // 3: bad Email
      `+15550106003,Cat,cat@example.com,${f.groupA};${other.groupA},Gold,\n` + // 4: another account's group
      `+15550106009,Renamed,,${f.groupB},Platinum,0\n` + // 5: known and opted out: OptedOut 1 → 0 refused
      `+15550106004,Dan,dan@example.com,,Silver,\n`; // 6
    const res = await importCsv(ctx, f.token, csv, { wire });
    assertBody(
      res,
      wire,
      200,
      report(2, 0, [
        [3, 'Email', 'Email is not a valid email address.'],
        [4, 'GroupIds', 'Group Ids is invalid.'],
        [5, 'OptedOut', OPT_OUT],
      ]),
    );
    const all = await contactsOf(ctx, f.account);
    assert.deepEqual([...all.keys()].sort(), ['15550106001', '15550106004', '15550106009']);
    assert.deepEqual(fieldsOf(all.get('15550106001')), {
      ...blank,
      Number: '15550106001',
      FirstName: 'Ann',
      Email: 'ann@example.com',
      GroupIds: [f.groupA],
      entries: { [f.tier]: 'Gold' },
    });
    assert.deepEqual(fieldsOf(all.get('15550106004')), {
      ...blank,
      Number: '15550106004',
      FirstName: 'Dan',
      Email: 'dan@example.com',
      entries: { [f.tier]: 'Silver' },
    });
    // The refused row changed nothing: name, memberships, entries and DateUpdated as before.
    assert.deepEqual(all.get('15550106009'), known);
    // No membership and no entry of the failed rows anywhere (the groups hold only Ann).
    const members = await ctx.store.db
      .selectFrom('group_members')
      .select(['group_id', 'contact_id'])
      .where('group_id', 'in', [f.groupA, f.groupB, other.groupA])
      .execute();
    assert.deepEqual(members, [{ group_id: f.groupA, contact_id: all.get('15550106001')!.Id }]);
  }
});

storeTest('import: every rule of contacts/create applies to a row, with its exact message and the Field named (JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const long = (n: number) => 'é'.repeat(n);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const rows: [string, [string, string] | null][] = [
      [',Ann,,,,,,,', ['Number', 'Number cannot be blank.']],
      ['  ,Ann,,,,,,,', ['Number', 'Number cannot be blank.']],
      ['12,Ann,,,,,,,', ['Number', 'Number is invalid.']],
      ['not a phone,Ann,,,,,,,', ['Number', 'Number is invalid.']],
      [`+15550107001,${long(256)},,,,,,,`, ['FirstName', 'First Name should contain at most 255 characters.']],
      [`+15550107002,${long(255)},${long(256)},,,,,,`, ['LastName', 'Last Name should contain at most 255 characters.']],
      ['+15550107003,,,a@b,,,,,', ['Email', 'Email is not a valid email address.']],
      [`+15550107004,,,,${'1'.repeat(33)},,,,`, ['Zip', 'Zip should contain at most 32 characters.']],
      [`+15550107005,,,,,${long(256)},,,`, ['City', 'City should contain at most 255 characters.']],
      ['+15550107006,,,,,,2023-02-29,,', ['BirthDay', 'The format of Birth Day is invalid.']],
      ['+15550107007,,,,,,1990/01/02,,', ['BirthDay', 'The format of Birth Day is invalid.']],
      ['+15550107008,,,,,,,2,', ['OptedOut', 'Opted Out is invalid.']],
      ['+15550107009,,,,,,,yes,', ['OptedOut', 'Opted Out must be an integer.']],
      [`+15550107010,,,,,,,,${f.groupA};x`, ['GroupIds', 'Group Ids is invalid.']],
      [`+15550107011,,,,,,,,${UNUSED_ID}`, ['GroupIds', 'Group Ids is invalid.']],
      ['+15550107012,,,,,,,,0', ['GroupIds', 'Group Ids is invalid.']],
      [`+15550107013,,,,,,,,"${f.groupA}, ${f.groupB}"`, ['GroupIds', 'Group Ids is invalid.']],
      ['+15550107014,,,,,,2024-02-29,1,', null],
      [`+15550107015,${long(255)},,x@example.com,${'1'.repeat(32)},,,,;${f.groupB};;`, null],
    ];
    const csv = `Number,FirstName,LastName,Email,Zip,City,BirthDay,OptedOut,GroupIds\n${rows.map(([r]) => r).join('\n')}\n`;
    const errors = rows.flatMap(([, e], i): [number, string, string][] => (e ? [[i + 2, e[0], e[1]]] : []));
    assertBody(await importCsv(ctx, f.token, csv, { wire }), wire, 200, report(2, 0, errors));
    assert.deepEqual([...(await contactsOf(ctx, f.account)).keys()], ['15550107014', '15550107015']);
    // A custom field cell: at most 255 characters, named by its column as written.
    const res = await importCsv(ctx, f.token, `Number,loyalty tier\n+15550107020,${long(256)}\n+15550107021,${long(255)}\n`, { wire });
    assertBody(res, wire, 200, report(1, 0, [[2, 'loyalty tier', 'loyalty tier should contain at most 255 characters.']]));
    // Cells beyond the header's columns must be empty.
    const extra = await importCsv(ctx, f.token, 'Number,FirstName\n+15550107030,Ann,,\n+15550107031,Bob,oops\n', { wire });
    assertBody(extra, wire, 200, report(1, 0, [[3, 'file', 'The row has 3 cells; the header has 2.']]));
  }
});

storeTest("import: a row's error is the first in the file's column order, the database's rules included", async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const other = await fixture(ctx);
    assertBody(await importCsv(ctx, f.token, 'Number,OptedOut\n+15550108001,1\n'), 'json', 200, report(1, 0));
    const cases: { csv: string; error: [string, string] }[] = [
      { csv: 'Zip,Email,Number\n123456789012345678901234567890123,bad,12', error: ['Zip', 'Zip should contain at most 32 characters.'] },
      { csv: 'Email,Zip,Number\nbad,123456789012345678901234567890123,12', error: ['Email', 'Email is not a valid email address.'] },
      { csv: 'Number,Email,Zip\n12,bad,123456789012345678901234567890123', error: ['Number', 'Number is invalid.'] },
      // GroupIds (another account's group) before a bad Email: the database's error comes first.
      { csv: `GroupIds,Email,Number\n${other.groupA},bad,+15550108002`, error: ['GroupIds', 'Group Ids is invalid.'] },
      { csv: `Email,GroupIds,Number\nbad,${other.groupA},+15550108002`, error: ['Email', 'Email is not a valid email address.'] },
      { csv: `OptedOut,Email,Number\n0,bad,+15550108001`, error: ['OptedOut', OPT_OUT] },
      { csv: `Email,OptedOut,Number\nbad,0,+15550108001`, error: ['Email', 'Email is not a valid email address.'] },
      { csv: `OptedOut,GroupIds,Number\n0,${UNUSED_ID},+15550108001`, error: ['OptedOut', OPT_OUT] },
      { csv: `GroupIds,OptedOut,Number\n${UNUSED_ID},0,+15550108001`, error: ['GroupIds', 'Group Ids is invalid.'] },
      {
        csv: `Loyalty Tier,Email,Number\n${'x'.repeat(256)},bad,+15550108003`,
        error: ['Loyalty Tier', 'Loyalty Tier should contain at most 255 characters.'],
      },
    ];
    const before = await snapshotAccount(ctx, f.account);
    for (const c of cases) {
      const res = await importCsv(ctx, f.token, c.csv, { wire });
      assertBody(res, wire, 200, report(0, 0, [[2, ...c.error]]));
    }
    assert.deepEqual(await snapshotAccount(ctx, f.account), before, 'failed rows write nothing');
  }
});

storeTest('import: OptedOut 0 → 1 is allowed, 1 → 0 refused, also within one file', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const csv =
      'Number,OptedOut,FirstName\n+15550110001,0,Ann\n+15550110001,1,Ann\n+15550110001,0,Anna\n+15550110001,,Annie\n+15550110001,1,Anne\n';
    assertBody(await importCsv(ctx, f.token, csv, { wire }), wire, 200, report(1, 3, [[4, 'OptedOut', OPT_OUT]]));
    assert.deepEqual(fieldsOf((await contactsOf(ctx, f.account)).get('15550110001')), {
      ...blank,
      Number: '15550110001',
      OptedOut: 1,
      FirstName: 'Anne',
    });
  }
});

storeTest("import: another account's group gives exactly what a missing group gives, and is never written", async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const other = await fixture(ctx);
  for (const wire of WIRES) {
    const theirs = await importCsv(ctx, f.token, `Number,GroupIds\n+15550111001,${other.groupB}\n`, { wire });
    const missing = await importCsv(ctx, f.token, `Number,GroupIds\n+15550111001,${UNUSED_ID}\n`, { wire });
    assertBody(theirs, wire, 200, report(0, 0, [[2, 'GroupIds', 'Group Ids is invalid.']]));
    assert.equal(theirs.body, missing.body);
  }
  assert.equal((await contactsOf(ctx, f.account)).size, 0);
  assert.equal((await contactsOf(ctx, other.account)).size, 0);
});

// ------------------------------------------------------------------ lines, BOM, CSV syntax

storeTest('import: a BOM is ignored; Line counts the lines of quoted fields spanning lines, blank lines and CRLF', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    for (const eol of ['\n', '\r\n', '\r']) {
      const f = await fixture(ctx);
      const text = [
        'Number,FirstName,Email', // 1
        `+15550112001,"Multi${eol}Line",a@example.com`, // 2-3
        '+15550112002,Bob,bad', // 4
        `"+15550112003","Three${eol}lines${eol}here",also-bad`, // 5-7
        '', // 8
        '+15550112004,Dan,"bad', // 9
        'again"', // 10
        '+15550112005,Eve,eve@example.com', // 11
        '+15550112006,Fay,"fay@example.com', // 12: never closed, to the end of the file
        '+15550112007,Gus,gus@example.com', // 13
      ].join(eol);
      const res = await importCsv(ctx, f.token, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), { wire });
      assertBody(
        res,
        wire,
        200,
        report(2, 0, [
          [4, 'Email', 'Email is not a valid email address.'],
          [5, 'Email', 'Email is not a valid email address.'],
          [9, 'Email', 'Email is not a valid email address.'],
          [12, 'file', 'The file is not valid CSV: a quoted field is not closed.'],
        ]),
      );
      const all = await contactsOf(ctx, f.account);
      assert.deepEqual([...all.keys()], ['15550112001', '15550112005']);
      assert.equal(all.get('15550112001')!.FirstName, `Multi${eol}Line`);
    }
  }
});

storeTest('import: a quote inside an unquoted cell is a character; a BOM-less file reads the same', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const res = await importCsv(
    ctx,
    f.token,
    'Number,FirstName,LastName\n+15550113001,Dwayne "The Rock",Johnson\n+15550113002,"A ""quoted"" name",x\n',
  );
  assertBody(res, 'json', 200, report(2, 0));
  const all = await contactsOf(ctx, f.account);
  assert.equal(all.get('15550113001')!.FirstName, 'Dwayne "The Rock"');
  assert.equal(all.get('15550113002')!.FirstName, 'A "quoted" name');
});

storeTest('import: Errors lists at most 1,000 errors (in line order); Failed counts every failed row', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const lines = ['Number,Email', '+15550114001,ok@example.com'];
    for (let i = 0; i < 1005; i++) lines.push(`+1555${String(2000000 + i)},bad${i}`);
    lines.push('+15550114002,ok2@example.com');
    const res = await importCsv(ctx, f.token, lines.join('\n'), { wire });
    const errors = Array.from({ length: 1000 }, (_, i): [number, string, string] => [
      i + 3,
      'Email',
      'Email is not a valid email address.',
    ]);
    assertBody(res, wire, 200, report(2, 0, errors, 1005));
  }
});

// ------------------------------------------------------------------ body, limits, media type

storeTest('import: its own body limit (MSGSVC_IMPORT_BODY_LIMIT, default 52,428,800): 413 beyond it and nothing written', async (t) => {
  assert.equal(loadConfig({}).importBodyLimitBytes, 52_428_800);
  const ctx = await buildTestApp(t, { MSGSVC_IMPORT_BODY_LIMIT: '2000', MSGSVC_BODY_LIMIT: '100' });
  const f = await fixture(ctx);
  const rowsOf = (n: number, from: number) => Array.from({ length: n }, (_, i) => `+1555${String(3000000 + from + i)},Name${i}`).join('\n');
  // Over MSGSVC_BODY_LIMIT (100 bytes), within the import's own limit.
  const fits = `Number,FirstName\n${rowsOf(80, 0)}`;
  assert.ok(fits.length > 100 && fits.length <= 2000, String(fits.length));
  assertBody(await importCsv(ctx, f.token, fits), 'json', 200, report(80, 0));
  const before = await snapshotAccount(ctx, f.account);
  const tooLarge = `Number,FirstName\n${rowsOf(200, 1000)}`;
  assert.ok(tooLarge.length > 2000);
  for (const wire of WIRES) {
    const res = await importCsv(ctx, f.token, tooLarge, { wire });
    assertError(res, 413, 'Request Entity Too Large: the body is over the limit of 2000 bytes.', wire);
  }
  assert.deepEqual(await snapshotAccount(ctx, f.account), before, 'a body over the limit writes nothing');
});

storeTest('import: a body that is not text/csv gets 415; text/csv with parameters is read', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const csv = 'Number\n+15550115001\n';
  for (const contentType of [
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'Text/CSV',
    'text/csv ;charset=utf-8',
    'application/csv',
    null,
  ]) {
    for (const wire of WIRES) {
      const res = await importCsv(ctx, f.token, csv, { wire, contentType });
      assertError(res, 415, 'Unsupported Media Type: send the file as text/csv.', wire);
    }
  }
  assert.equal((await contactsOf(ctx, f.account)).size, 0);
  assertBody(await importCsv(ctx, f.token, csv, { contentType: 'text/csv; charset=UTF-8' }), 'json', 200, report(1, 0));
});

storeTest('import: auth, method and rate limit come first (401, 405 with Allow)', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const noToken = await ctx.app.inject({ method: 'POST', url: IMPORT, headers: { 'content-type': 'text/csv' }, payload: 'Foo\n1\n' });
  assertError(noToken, 401, 'Your request was made with invalid credentials.');
  const get = await ctx.app.inject({ method: 'GET', url: urlOf({ path: IMPORT, token: f.token }) });
  assert.equal(get.statusCode, 405);
  assert.equal(get.headers.allow, 'POST');
});

storeTest('import: Idempotency-Key replays the report and imports nothing twice', async (t) => {
  const ctx = await buildTestApp(t);
  const f = await fixture(ctx);
  const csv = 'Number,FirstName\n+15550116001,Ann\n+15550116002,\n12,Bad\n';
  const headers = { 'idempotency-key': 'import-1' };
  const first = await importCsv(ctx, f.token, csv, { headers });
  const expected = report(2, 0, [[4, 'Number', 'Number is invalid.']]);
  assertBody(first, 'json', 200, expected);
  const after = await snapshotAccount(ctx, f.account);
  // The same request: the format chosen by Accept only (`_format` would make it another query).
  for (const wire of ['json', 'xml'] as const) {
    const replay = await importCsv(ctx, f.token, csv, { headers, wire });
    assertBody(replay, wire, 200, expected);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  }
  assert.deepEqual(await snapshotAccount(ctx, f.account), after);
  const different = await importCsv(ctx, f.token, `${csv}+15550116003,New\n`, { headers });
  assertError(different, 409, 'Idempotency-Key was used with a different request.');
});

// ------------------------------------------------------------------ the write path (domain)

storeTest(
  'import (domain): many batches keep line order; time comes from the clock given; a constraint failure undoes that row alone',
  async (t) => {
    const ctx = await buildTestApp(t);
    const f = await fixture(ctx);
    const T = 1_700_000_000;
    const run = (csv: string, batchRows: number) =>
      importContacts(ctx.store, f.account, Readable.from([Buffer.from(csv)]), { region: 'US', batchRows, now: () => T });
    const lines = ['Number,FirstName,GroupIds'];
    const errors: [number, string, string][] = [];
    for (let i = 0; i < 23; i++) {
      const bad = i % 4 === 1;
      lines.push(`+1555${String(4000000 + i)},${bad ? 'é'.repeat(256) : `N${i}`},${i % 3 === 0 ? f.groupA : ''}`);
      if (bad) errors.push([i + 2, 'FirstName', 'First Name should contain at most 255 characters.']);
    }
    const progress: number[] = [];
    const got = await importContacts(ctx.store, f.account, Readable.from([Buffer.from(lines.join('\n'))]), {
      region: 'US',
      batchRows: 3,
      now: () => T,
      onProgress: (bytes) => progress.push(bytes),
    });
    assert.deepEqual(got, report(23 - errors.length, 0, errors));
    assert.ok(progress.length >= 7 && progress.at(-1) === Buffer.byteLength(lines.join('\n')));
    const rows = await ctx.store.db
      .selectFrom('contacts')
      .select(['created_at', 'updated_at'])
      .where('account_id', '=', f.account)
      .execute();
    assert.ok(rows.length === 23 - errors.length && rows.every((r) => Number(r.created_at) === T && Number(r.updated_at) === T));

    // A write that fails on a constraint inside a batch (here: an extra unique index on Email that
    // the row checks know nothing of): the batch is written again with a savepoint per row, and only
    // that row is left out, its membership and entry included.
    await ctx.store.db.schema
      .createIndex('test_contacts_email_uq')
      .on('contacts')
      .columns(['account_id', 'email'])
      .unique()
      .where('email', '<>', '')
      .execute();
    const csv =
      'Number,Email,GroupIds,Loyalty Tier\n' +
      `+15550117001,same@example.com,${f.groupB},Gold\n` +
      `+15550117002,other@example.com,${f.groupB},Gold\n` +
      `+15550117003,same@example.com,${f.groupB},Gold\n` +
      `+15550117004,,${f.groupB},Gold\n`;
    assert.deepEqual(await run(csv, 10), report(3, 0, [[4, 'Number', 'Number "+15550117003" has already been taken.']]));
    const all = await contactsOf(ctx, f.account);
    assert.ok(!all.has('15550117003'));
    for (const n of ['15550117001', '15550117002', '15550117004']) assert.deepEqual(all.get(n)!.GroupIds, [f.groupB]);
    const members = await ctx.store.db.selectFrom('group_members').select('contact_id').where('group_id', '=', f.groupB).execute();
    assert.equal(members.length, 3);
    const entries = await ctx.store.db
      .selectFrom('custom_field_entries')
      .select('contact_id')
      .where('custom_field_id', '=', f.tier)
      .execute();
    assert.equal(entries.length, 3);
  },
);

// ------------------------------------------------------------------ over a real socket

storeTest('import over a real socket: JSON and XML replies, 413 for a chunked body over the limit with nothing written', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_IMPORT_BODY_LIMIT: '4000' });
  const f = await fixture(ctx);
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const csv = `\uFEFFNumber,FirstName,Email,GroupIds\r\n+15550118001,"Two\r\nlines",a@example.com,${f.groupA}\r\n+15550118002,Bob,bad,\r\n`;
  const post = (body: string, wire: Wire, number: string) =>
    fetch(`${base}${urlOf({ path: IMPORT, token: f.token, wire })}`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/csv', Accept: wire === 'xml' ? 'application/xml' : 'application/json' },
      body: body.replaceAll('+15550118001', number),
    });
  let n = 0;
  for (const wire of WIRES) {
    const res = await post(csv, wire, `+1555011810${n++}`);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(res.headers.get('content-type'), isXml(wire) ? XML_TYPE : JSON_TYPE);
    // A new number each time; Bob's row (line 4, after a field spanning lines 2-3) fails each time.
    const expected = report(1, 0, [[4, 'Email', 'Email is not a valid email address.']]);
    if (isXml(wire)) {
      assertXmlLayout(text);
      assert.equal(text, xmlDocument(expected));
    } else assert.equal(text, JSON.stringify(expected));
  }
  const all = await contactsOf(ctx, f.account);
  assert.deepEqual([...all.keys()], ['15550118100', '15550118101', '15550118102']);
  assert.equal(all.get('15550118100')!.FirstName, 'Two\r\nlines');

  // A chunked upload (no Content-Length) that turns out larger than the limit: 413, and none of its
  // rows are written, although the first ones came in well before the limit.
  const before = await snapshotAccount(ctx, f.account);
  const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      `${base}${urlOf({ path: IMPORT, token: f.token })}`,
      { method: 'POST', headers: { 'content-type': 'text/csv', accept: 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.write('Number,FirstName\n');
    for (let i = 0; i < 300; i++) req.write(`+1555${String(5000000 + i)},Chunk${i}\n`);
    req.end();
  });
  assert.equal(status, 413, body);
  assert.equal(
    body,
    JSON.stringify({
      name: 'Request Entity Too Large',
      message: 'Request Entity Too Large: the body is over the limit of 4000 bytes.',
      code: 0,
      status: 413,
    }),
  );
  assert.deepEqual(await snapshotAccount(ctx, f.account), before);
});

storeTest('import over a real socket: the request timeout bounds the upload only, never the import after it', async (t) => {
  const timeoutMs = 200;
  const ctx = await buildTestApp(t, { MSGSVC_REQUEST_TIMEOUT_MS: String(timeoutMs) });
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  // The rule shows only in an import that outlasts the timeout several times over. How many rows
  // take that long depends on the store (PostgreSQL writes a row many times slower than SQLite) and
  // on the machine, so the file grows from the measured rate until one import does: one size long
  // enough for SQLite everywhere (40,000 rows) costs half a minute on PostgreSQL. Every import is
  // checked in full, each on its own account (its own contacts and rate limit).
  const meaningfulMs = 3 * timeoutMs;
  const maxRows = 320_000;
  let rows = 1_000;
  let elapsed: number;
  for (;;) {
    const f = await fixture(ctx);
    const lines = ['Number,FirstName,Loyalty Tier'];
    for (let i = 0; i < rows; i++) lines.push(`+1555${String(6000000 + i)},Name ${i},Tier ${i % 3}`);
    const started = Date.now();
    const res = await fetch(`${base}${urlOf({ path: IMPORT, token: f.token })}`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/csv' },
      body: lines.join('\n'),
    });
    const text = await res.text();
    elapsed = Date.now() - started;
    t.diagnostic(`${rows} rows imported in ${elapsed} ms`);
    assert.equal(res.status, 200, text);
    assert.equal(text, JSON.stringify(report(rows, 0)));
    if (elapsed > meaningfulMs || rows >= maxRows) break;
    // Aim at twice the threshold, so that one more import is almost always the last.
    rows = Math.min(maxRows, Math.max(2 * rows, Math.ceil((rows * 2 * meaningfulMs) / Math.max(1, elapsed))));
  }
  // Meaningful only when the import outlasted the timeout several times over.
  assert.ok(elapsed > meaningfulMs, `the import of ${rows} rows took ${elapsed} ms`);
});

storeTest('import: a row over 1 MiB (a quote never closed) ends the import there; the rows before it commit (JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  for (const wire of WIRES) {
    const f = await fixture(ctx);
    const lines = ['Number,FirstName', '+15550119001,Ann', '', '+15550119002,"never closed'];
    for (let i = 0; i < 60_000; i++) lines.push(`+1555${String(8000000 + i)},Row ${i}`);
    const res = await importCsv(ctx, f.token, lines.join('\n'), { wire });
    assertBody(
      res,
      wire,
      200,
      report(1, 0, [[4, 'file', 'The file is not valid CSV: a row is longer than 1,048,576 bytes; the rest of the file was not read.']]),
    );
    assert.deepEqual([...(await contactsOf(ctx, f.account)).keys()], ['15550119001']);
  }
});

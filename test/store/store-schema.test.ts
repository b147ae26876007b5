import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';
import { isUniqueViolation } from '../../src/store/errors.ts';
import * as contacts from '../../src/store/repositories/contacts.ts';
import * as fields from '../../src/store/repositories/custom-fields.ts';
import * as groups from '../../src/store/repositories/groups.ts';
import * as keywords from '../../src/store/repositories/keywords.ts';
import * as numbers from '../../src/store/repositories/numbers.ts';
import { migrateToLatest } from '../../src/store/db.ts';

// The rules that keep the data right live in the schema of both databases, not only in code:
// these tests write through the repositories around the domain checks and expect the database to refuse.

storeTest('a keyword is unique per number, case-insensitively, by index', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const number = (await numbers.findNumber(ctx.store.db, a.account.id, a.numbers[0]!.Number))!;
  const reserve = (keyword: string) =>
    keywords.insertKeywordReservation(
      ctx.store.db,
      a.account.id,
      { accountNumberId: number.id, keyword, keywordKey: keyword.toLowerCase(), autoreplyMessage: '' },
      0,
    );
  await reserve('Hello');
  await assert.rejects(reserve('HELLO'), (err) => isUniqueViolation(err));
});

storeTest(`ownership: an entry, a membership or a reservation cannot point at another account's rows`, async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  const db = ctx.store.db;
  const bContact = b.contacts[0]!.Id;
  const aField = a.customFields[0]!.Id;
  await assert.rejects(fields.insertEntry(db, a.account.id, aField, bContact, 'x', 0), 'entry with a foreign contact');
  await assert.rejects(groups.addGroupMember(db, a.account.id, a.groups[0]!.Id, bContact), 'membership with a foreign contact');
  const bNumber = (await numbers.findNumber(db, b.account.id, b.numbers[0]!.Number))!;
  await assert.rejects(
    keywords.insertKeywordReservation(
      db,
      a.account.id,
      { accountNumberId: bNumber.id, keyword: 'OWNED', keywordKey: 'owned', autoreplyMessage: '' },
      0,
    ),
    'reservation on a foreign number',
  );
  const entry = a.customFieldEntries[0]!;
  await assert.rejects(
    fields.updateEntry(db, a.account.id, entry.Id, { customFieldId: b.customFields[0]!.Id, contactId: entry.PhoneNumberId, entry: 'x' }, 0),
    'moving an entry onto a foreign field',
  );
  assert.equal((await fields.findEntry(db, a.account.id, entry.Id))!.custom_field_id, entry.CustomFieldId);
});

storeTest('one entry per custom field × contact; one contact per number per account', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const db = ctx.store.db;
  const entry = a.customFieldEntries[0]!;
  await assert.rejects(fields.insertEntry(db, a.account.id, entry.CustomFieldId, entry.PhoneNumberId, 'dup', 0), (err) =>
    isUniqueViolation(err),
  );
  const c = a.contacts[0]!;
  await assert.rejects(
    contacts.insertContact(
      db,
      a.account.id,
      { number: c.Number, e164: `+${c.Number}`, optedOut: 0, firstName: '', lastName: '', birthday: null, email: '', zip: '', city: '' },
      0,
    ),
    (err) => isUniqueViolation(err),
  );
});

storeTest(`statuses and types outside API.md's tables are refused by check constraints`, async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  await assert.rejects(numbers.insertNumber(ctx.store.db, a.account.id, '15550109999', 7, null, 0));
  await assert.rejects(
    ctx.store.db
      .insertInto('scheduled_messages')
      .values({
        account_id: a.account.id,
        mobile_phone: '1',
        message: 'm',
        scheduled_at: 0,
        status_id: 4,
        type_id: 1,
        mms_template_id: null,
        subject: '',
        created_at: 0,
      })
      .execute(),
  );
  await assert.rejects(
    ctx.store.db
      .insertInto('scheduled_messages')
      .values({
        account_id: a.account.id,
        mobile_phone: '1',
        message: 'm',
        scheduled_at: 0,
        status_id: 1,
        type_id: 3,
        mms_template_id: null,
        subject: '',
        created_at: 0,
      })
      .execute(),
  );
});

storeTest('migrations are idempotent: a second run applies nothing', async (t) => {
  const ctx = await buildTestApp(t);
  assert.deepEqual(await migrateToLatest(ctx.store), []);
});

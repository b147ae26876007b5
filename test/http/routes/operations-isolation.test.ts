/**
 * Account isolation (API.md §1.2: another account's id behaves exactly like a missing id) and
 * persistence of every write across a restart on the same database file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import * as accounts from '../../../src/store/repositories/accounts.ts';
import * as contactsRepo from '../../../src/store/repositories/contacts.ts';
import * as numbersRepo from '../../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertError,
  call,
  contactFromDb,
  customFieldFromDb,
  entryFromDb,
  fieldError,
  groupFromDb,
  keywordsFromDb,
  messagesFromDb,
  numbersFromDb,
  nowSeconds,
  snapshotAccount,
  WIRES,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

storeTest('account B cannot read or change account A records by id, frfield, frcontact, number or keyword Number', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('Account A');
  const b = await ctx.seed('Account B');
  assert.notEqual(a.account.id, b.account.id);
  // Records only A has: a long number, a contact, a different balance, a keyword.
  const now = nowSeconds();
  await numbersRepo.insertNumber(ctx.store.db, a.account.id, '15550199999', 0, null, now);
  await contactsRepo.insertContact(
    ctx.store.db,
    a.account.id,
    {
      number: '15551230000',
      e164: '+15551230000',
      optedOut: 0,
      firstName: 'Only',
      lastName: 'A',
      birthday: null,
      email: '',
      zip: '',
      city: '',
    },
    now,
  );
  await accounts.changeCredits(ctx.store.db, a.account.id, 777, 'set', now);
  assert.equal(
    (
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/keyword/reserve',
        token: a.token,
        body: { Keyword: 'ONLYA', Number: '15550199999' },
      })
    ).statusCode,
    201,
  );
  const before = await snapshotAccount(ctx, a.account.id);

  const aGroup = a.groups[0]!;
  const aField = a.customFields[0]!;
  const aEntry = a.customFieldEntries[0]!;
  const aContact = a.contacts[0]!;
  const bEntry = b.customFieldEntries.find((e) => e.CustomFieldId === b.customFields[0]!.Id)!;
  for (const wire of WIRES) {
    // Ids of A in the query: 404 exactly like a missing id, even with a valid body and even with an invalid one.
    for (const body of [{ fname: 'Hijacked' }, { fname: '' }]) {
      assertError(
        await call(ctx.app, { method: 'PUT', path: '/v1/groups/update', token: b.token, query: `id=${aGroup.Id}`, wire, body }),
        404,
        `Object not found: ${aGroup.Id}`,
        wire,
      );
      assertError(
        await call(ctx.app, {
          method: 'PATCH',
          path: '/v1/custom-contact-fields/update',
          token: b.token,
          query: `id=${aField.Id}`,
          wire,
          body,
        }),
        404,
        `Object not found: ${aField.Id}`,
        wire,
      );
    }
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      for (const body of [
        { frfield: b.customFields[0]!.Id, frcontact: b.contacts[0]!.Id, fvalue: 'Hijacked' },
        { frfield: aField.Id, frcontact: aContact.Id, fvalue: 'Hijacked' },
        {},
      ]) {
        assertError(
          await call(ctx.app, {
            method,
            path: '/v1/custom-contact-fields-entry/update',
            token: b.token,
            query: `id=${aEntry.Id}`,
            wire,
            body,
          }),
          404,
          `Object not found: ${aEntry.Id}`,
          wire,
        );
      }
      // References to A in B's own entry: 422 invalid, as for an unknown id.
      const onB = (body: unknown) =>
        call(ctx.app, { method, path: '/v1/custom-contact-fields-entry/update', token: b.token, query: `id=${bEntry.Id}`, wire, body });
      assert422(
        await onB({ frfield: aField.Id, frcontact: b.contacts[1]!.Id, fvalue: 'x' }),
        [fieldError('frfield', 'Frfield is invalid.')],
        wire,
      );
      assert422(
        await onB({ frfield: b.customFields[2]!.Id, frcontact: String(aContact.Id), fvalue: 'x' }),
        [fieldError('frcontact', 'Frcontact is invalid.')],
        wire,
      );
      assert422(
        await onB({ frfield: `${aField.Id}`, frcontact: aContact.Id, fvalue: 'x' }),
        [fieldError('frfield', 'Frfield is invalid.'), fieldError('frcontact', 'Frcontact is invalid.')],
        wire,
      );
    }
    // A's number in B's keyword reservation: invalid, like an unknown number.
    for (const Number of ['15550199999', 15550199999]) {
      assert422(
        await call(ctx.app, { method: 'POST', path: '/v1/keyword/reserve', token: b.token, wire, body: { Keyword: 'STEAL', Number } }),
        [fieldError('Number', 'Number is invalid.')],
        wire,
      );
    }
    // A's contact number: B gets 404.
    assertError(
      await call(ctx.app, { path: '/v1/contacts/find', token: b.token, query: 'number=%2B15551230000', wire }),
      404,
      'Object not found: +15551230000',
      wire,
    );
  }

  // Lists and the balance show only the caller's own data.
  const bNumbers = JSON.parse((await call(ctx.app, { path: '/v1/numbers/index', token: b.token })).body) as { Number: string }[];
  assert.deepEqual(bNumbers, await numbersFromDb(ctx, b.account.id));
  assert.ok(!bNumbers.some((n) => n.Number === '15550199999'));
  const aNumbers = JSON.parse((await call(ctx.app, { path: '/v1/numbers/index', token: a.token })).body) as { Number: string }[];
  assert.ok(aNumbers.some((n) => n.Number === '15550199999'));
  assert.equal((await call(ctx.app, { path: '/v1/credits/balance', token: b.token })).body, '{"AvailableCredits":2500}');
  assert.equal((await call(ctx.app, { path: '/v1/credits/balance', token: a.token })).body, '{"AvailableCredits":777}');
  const bMessages = JSON.parse((await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: b.token })).body) as {
    Id: number;
  }[];
  assert.deepEqual(bMessages, await messagesFromDb(ctx, b.account.id));
  const aMessageIds = new Set(a.scheduledMessages.map((m) => m.Id));
  assert.ok(bMessages.length > 0 && bMessages.every((m) => !aMessageIds.has(m.Id)));
  // Both demo accounts have a contact with the same number: each finds its own.
  const sameNumber = a.contacts[0]!.Number;
  assert.equal(b.contacts[0]!.Number, sameNumber);
  const foundByB = JSON.parse((await call(ctx.app, { path: '/v1/contacts/find', token: b.token, query: `number=${sameNumber}` })).body) as {
    Id: number;
    GroupIds: number[];
  };
  assert.equal(foundByB.Id, b.contacts[0]!.Id);
  assert.deepEqual(foundByB, await contactFromDb(ctx, b.contacts[0]!.Id));
  assert.ok(foundByB.GroupIds.every((id) => !a.groups.some((g) => g.Id === id)));
  // A keyword is unique on a number across ALL accounts (API.md §10.5): B, on its own number
  // with the same digits as A's short code, cannot take the keyword A holds (but may take another).
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: '/v1/keyword/reserve', token: a.token, body: { Keyword: 'SHARED', Number: '55155' } }))
      .statusCode,
    201,
  );
  const afterA = await snapshotAccount(ctx, a.account.id);
  const taken = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: b.token,
    body: { Keyword: 'shared', Number: '55155' },
  });
  assert.equal(taken.statusCode, 422);
  assert.equal(taken.body, '[{"field":"Keyword","message":"Keyword \\"shared\\" has already been taken."}]');
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: '/v1/keyword/reserve', token: b.token, body: { Keyword: 'shared2', Number: '55155' } }))
      .statusCode,
    201,
  );
  assert.deepEqual(
    (await keywordsFromDb(ctx, b.account.id)).map((r) => r.keyword),
    ['shared2'],
  );

  // A's data is exactly as it was (apart from A's own reservation above).
  assert.deepEqual(await snapshotAccount(ctx, a.account.id), afterA);
  const { keyword_reservations: kwBefore, ...restBefore } = before;
  const { keyword_reservations: kwAfter, ...restAfter } = afterA;
  assert.deepEqual(restAfter, restBefore);
  assert.equal(kwAfter!.length, kwBefore!.length + 1);
  assert.deepEqual(await groupFromDb(ctx, aGroup.Id), aGroup);
  assert.deepEqual(await customFieldFromDb(ctx, aField.Id), aField);
  assert.deepEqual(await entryFromDb(ctx, aEntry.Id), aEntry);
});

storeTest('writes persist across a restart on the same database file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-ops-restart-'));
  // eslint-disable-next-line prefer-const -- the after hook reads it, and runs even when the test fails before the restart assigns it
  let second: TestApp | undefined;
  t.after(async () => {
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const first = await buildTestApp(undefined, {}, { dir });
  const demo = await first.seed();
  const group = demo.groups[1]!;
  const field = demo.customFields[2]!;
  const entry = demo.customFieldEntries[0]!;
  const target = demo.contacts[1]!;
  const w1 = await call(first.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    body: { fname: 'Gold members', fnote: 'Persisted note' },
  });
  const w2 = await call(first.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${field.Id}`,
    body: { fname: 'Shoe size (US)' },
  });
  const w3 = await call(first.app, {
    method: 'POST',
    path: '/v1/custom-contact-fields-entry/update',
    token: demo.token,
    query: `id=${entry.Id}`,
    body: { frfield: String(field.Id), frcontact: String(target.Id), fvalue: '10.5' },
  });
  const w4 = await call(first.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: demo.token,
    body: { Keyword: 'Restart', Number: '55155', AutoreplyMessage: 'Still here' },
  });
  assert.deepEqual([w1.statusCode, w2.statusCode, w3.statusCode, w4.statusCode], [200, 200, 200, 201]);
  const entryAfterWrite = JSON.parse(w3.body) as unknown;
  await first.close();

  second = await buildTestApp(undefined, {}, { dir });
  // The token still authenticates; reads show the writes.
  const contact = JSON.parse(
    (await call(second.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${target.Number}` })).body,
  ) as { CustomFieldIds: number[] };
  assert.deepEqual(contact.CustomFieldIds, [field.Id]);
  // groups/update with only fname answers the stored note: the fnote written before the restart.
  const g = await call(second.app, {
    method: 'PATCH',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    body: { fname: 'Gold members' },
  });
  assert.equal(g.statusCode, 200);
  const gBody = JSON.parse(g.body) as { Name: string; Note: string; PhoneNumberIds: number[] };
  assert.equal(gBody.Note, 'Persisted note');
  assert.deepEqual(gBody.PhoneNumberIds, group.PhoneNumberIds);
  const stored = await customFieldFromDb(second, field.Id);
  assert.equal(stored.Name, 'Shoe size (US)');
  assert.deepEqual(stored.Value, [entryAfterWrite]);
  assert.deepEqual(await entryFromDb(second, entry.Id), entryAfterWrite);
  // The reservation survived: reserving it again is taken.
  assert422(
    await call(second.app, { method: 'POST', path: '/v1/keyword/reserve', token: demo.token, body: { Keyword: 'RESTART', Number: 55155 } }),
    [fieldError('Keyword', 'Keyword "RESTART" has already been taken.')],
  );
  const kw = await keywordsFromDb(second, demo.account.id);
  assert.deepEqual(
    kw.map((r) => [r.keyword, r.number, r.autoreply_message]),
    [['Restart', '55155', 'Still here']],
  );
});

/**
 * keyword/reserve: 201 with a one-element list, the JSON and the swapped XML element names
 * (API.md §9.8, §9), every validation rule, Active-number and
 * ownership checks, case-insensitive uniqueness per number and the carrier words.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import * as numbersRepo from '../../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  assertXmlLayout,
  call,
  fieldError,
  JSON_TYPE,
  keywordsFromDb,
  nowSeconds,
  snapshotAccount,
  WIRES,
  XML_TYPE,
  XML_DECL,
  type Wire,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const PATH = '/v1/keyword/reserve';

function reserve(ctx: TestApp, demo: DemoAccount, body: unknown, wire: Wire = 'json') {
  return call(ctx.app, { method: 'POST', path: PATH, token: demo.token, body, wire });
}

/** The one record the response should hold, read from the database: the newest reservation. */
async function newest(ctx: TestApp, demo: DemoAccount) {
  const rows = await keywordsFromDb(ctx, demo.account.id);
  const r = rows[rows.length - 1]!;
  return { Id: r.id, Keyword: r.keyword, Number: Number(r.number), AutoreplyMessage: r.autoreply_message };
}

storeTest('keyword/reserve answers 201 with a one-element list: JSON fields Id, Keyword, Number, AutoreplyMessage', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const res = await reserve(ctx, demo, { Keyword: 'SALE', Number: '55155' });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.statusMessage, 'Created');
  assert.equal(res.headers['content-type'], JSON_TYPE);
  const rows = await keywordsFromDb(ctx, demo.account.id);
  assert.equal(rows.length, 1, 'persisted');
  assert.deepEqual([rows[0]!.keyword, rows[0]!.number, rows[0]!.autoreply_message], ['SALE', '55155', '']);
  assert.equal(res.body, `[{"Id":${rows[0]!.id},"Keyword":"SALE","Number":55155,"AutoreplyMessage":""}]`);

  // Number as a JSON integer, a long number, and an AutoreplyMessage.
  const res2 = await reserve(ctx, demo, { Keyword: 'Join Us', Number: 15550100001, AutoreplyMessage: 'Thanks! Reply STOP to opt out.' });
  const r2 = await newest(ctx, demo);
  assert.equal(res2.statusCode, 201);
  assert.equal(res2.body, `[{"Id":${r2.Id},"Keyword":"Join Us","Number":15550100001,"AutoreplyMessage":"Thanks! Reply STOP to opt out."}]`);
  assert.notEqual(r2.Id, rows[0]!.id);

  // Quoted with a sign; unknown keys ignored.
  const res3 = await reserve(ctx, demo, {
    Keyword: 'PROMO',
    Number: '+55155',
    AutoreplyMessage: '',
    Id: 1,
    ShortCode: 99999,
    keyword: 'x',
  });
  const r3 = await newest(ctx, demo);
  assert.equal(res3.statusCode, 201, res3.body);
  assert.equal(res3.body, JSON.stringify([r3]));
  assert.deepEqual([r3.Keyword, r3.Number], ['PROMO', 55155]);
});

storeTest('keyword/reserve XML: elements Id, Number (the keyword), ShortCode (the number), AutoreplyMessage', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  let n = 0;
  for (const wire of ['xml', 'xml-param'] as const) {
    n++;
    const res = await reserve(
      ctx,
      demo,
      { Keyword: `WINTER${n}`, Number: n === 1 ? '55155' : 15550100001, AutoreplyMessage: n === 1 ? '' : 'Deals & <offers>' },
      wire,
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], XML_TYPE);
    assertXmlLayout(res.body);
    const r = await newest(ctx, demo);
    const expectedNumber = n === 1 ? '55155' : '15550100001';
    const autoreply = n === 1 ? '<AutoreplyMessage></AutoreplyMessage>' : '<AutoreplyMessage>Deals &amp; &lt;offers&gt;</AutoreplyMessage>';
    assert.equal(
      res.body,
      `${XML_DECL}\n<response><item><Id>${r.Id}</Id><Number>WINTER${n}</Number><ShortCode>${expectedNumber}</ShortCode>${autoreply}</item></response>\n`,
    );
  }
  // And the JSON form of the same kind of request keeps the JSON names.
  const json = await reserve(ctx, demo, { Keyword: 'WINTER3', Number: '55155' });
  const r = await newest(ctx, demo);
  assertBody(json, 'json', 201, [{ Id: r.Id, Keyword: 'WINTER3', Number: 55155, AutoreplyMessage: '' }]);
});

storeTest('keyword/reserve: every validation rule with exact messages and order; a failed reserve stores nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const kwBlank = fieldError('Keyword', 'Keyword cannot be blank.');
  const numBlank = fieldError('Number', 'Number cannot be blank.');
  const kwShort = fieldError('Keyword', 'Keyword should contain at least 4 characters.');
  const kwNotString = fieldError('Keyword', 'Keyword must be a string.');
  const numNotInt = fieldError('Number', 'Number must be an integer.');
  const numInvalid = fieldError('Number', 'Number is invalid.');
  const autoNotString = fieldError('AutoreplyMessage', 'Autoreply Message must be a string.');
  const cases: [string, unknown, { field: string; message: string }[]][] = [
    ['empty object', {}, [kwBlank, numBlank]],
    ['unknown keys only', { keyword: 'SALE', number: '55155' }, [kwBlank, numBlank]],
    ['Keyword missing', { Number: '55155' }, [kwBlank]],
    ['Keyword null', { Keyword: null, Number: '55155' }, [kwBlank]],
    ['Keyword whitespace', { Keyword: '    ', Number: '55155' }, [kwBlank]],
    ['Keyword empty array', { Keyword: [], Number: '55155' }, [kwBlank]],
    ['Number missing', { Keyword: 'SALE' }, [numBlank]],
    ['Number empty', { Keyword: 'SALE', Number: '' }, [numBlank]],
    ['Number whitespace', { Keyword: 'SALE', Number: '  ' }, [numBlank]],
    ['Keyword 3 chars', { Keyword: 'ABC', Number: '55155' }, [kwShort]],
    ['Keyword 3 characters, 9 bytes', { Keyword: '日本語', Number: '55155' }, [kwShort]],
    ['Keyword 3 emoji', { Keyword: '🎉🎉🎉', Number: '55155' }, [kwShort]],
    ['Keyword integer', { Keyword: 12345, Number: '55155' }, [kwNotString]],
    ['Keyword boolean', { Keyword: true, Number: '55155' }, [kwNotString]],
    ['Keyword array', { Keyword: ['SALE'], Number: '55155' }, [kwNotString]],
    ['Number "12a"', { Keyword: 'SALE', Number: '55155a' }, [numNotInt]],
    ['Number 1.5', { Keyword: 'SALE', Number: 1.5 }, [numNotInt]],
    ['Number true', { Keyword: 'SALE', Number: true }, [numNotInt]],
    ['Number array', { Keyword: 'SALE', Number: ['55155'] }, [numNotInt]],
    ['Number with spaces inside', { Keyword: 'SALE', Number: '551 55' }, [numNotInt]],
    ['AutoreplyMessage integer', { Keyword: 'SALE', Number: '55155', AutoreplyMessage: 5 }, [autoNotString]],
    ['AutoreplyMessage array', { Keyword: 'SALE', Number: '55155', AutoreplyMessage: ['hi'] }, [autoNotString]],
    ['Inactive number', { Keyword: 'SALE', Number: '15550100002' }, [numInvalid]],
    ['Temporarily blocked number', { Keyword: 'SALE', Number: '15550100003' }, [numInvalid]],
    ['Permanently blocked number', { Keyword: 'SALE', Number: 15550100004 }, [numInvalid]],
    ['unknown number', { Keyword: 'SALE', Number: '99999' }, [numInvalid]],
    ['negative number', { Keyword: 'SALE', Number: '-55155' }, [numInvalid]],
    ['zero', { Keyword: 'SALE', Number: 0 }, [numInvalid]],
    ['short keyword and bad number: Keyword first', { Number: 'x', Keyword: 'ab' }, [kwShort, numNotInt]],
    ['short keyword and inactive number', { Keyword: 'ab', Number: '15550100002' }, [kwShort, numInvalid]],
    ['all three bad', { Keyword: 7, Number: 'n', AutoreplyMessage: false }, [kwNotString, numNotInt, autoNotString]],
  ];
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const [name, body, errors] of cases) {
    for (const wire of WIRES) {
      const res = await reserve(ctx, demo, body, wire);
      try {
        assert422(res, errors, wire);
      } catch (err) {
        (err as Error).message = `case "${name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
    }
  }
  for (const rawBody of ['', 'null']) {
    const res = await call(ctx.app, { method: 'POST', path: PATH, token: demo.token, rawBody });
    assert422(res, [kwBlank, numBlank]);
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing stored');
  // The 4-character boundary, counted in characters.
  for (const Keyword of ['ABCD', '日本語文', '🎉🎉🎉🎉']) {
    const res = await reserve(ctx, demo, { Keyword, Number: '55155' });
    assert.equal(res.statusCode, 201, `${Keyword}: ${res.body}`);
    assert.equal((await newest(ctx, demo)).Keyword, Keyword);
  }
});

storeTest('keyword/reserve: a keyword is unique per number, case-insensitively; another number may reuse it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  assert.equal((await reserve(ctx, demo, { Keyword: 'Pizza', Number: '55155' })).statusCode, 201);
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const Keyword of ['Pizza', 'PIZZA', 'pizza', 'pIzZa']) {
    for (const Number of ['55155', 55155, '+55155']) {
      for (const wire of WIRES) {
        const res = await reserve(ctx, demo, { Keyword, Number }, wire);
        assert422(res, [fieldError('Keyword', `Keyword "${Keyword}" has already been taken.`)], wire);
      }
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing stored');
  // The same keyword on the account's other Active number is fine, once.
  const other = await reserve(ctx, demo, { Keyword: 'PIZZA', Number: '15550100001' });
  assert.equal(other.statusCode, 201, other.body);
  assert.equal((JSON.parse(other.body) as { Number: number }[])[0]!.Number, 15550100001);
  assert422(await reserve(ctx, demo, { Keyword: 'pizza', Number: 15550100001 }), [
    fieldError('Keyword', 'Keyword "pizza" has already been taken.'),
  ]);
  const rows = await keywordsFromDb(ctx, demo.account.id);
  assert.deepEqual(
    rows.map((r) => [r.keyword, r.number]),
    [
      ['Pizza', '55155'],
      ['PIZZA', '15550100001'],
    ],
  );
  // A number that becomes Active (inserted for the test) accepts it too; one becoming Inactive refuses.
  await numbersRepo.insertNumber(ctx.store.db, demo.account.id, '15550100077', 0, null, nowSeconds());
  assert.equal((await reserve(ctx, demo, { Keyword: 'pizza', Number: '15550100077' })).statusCode, 201);
  await ctx.store.db
    .updateTable('account_numbers')
    .set({ status_id: 1 })
    .where('account_id', '=', demo.account.id)
    .where('number', '=', '15550100077')
    .execute();
  assert422(await reserve(ctx, demo, { Keyword: 'burger', Number: '15550100077' }), [fieldError('Number', 'Number is invalid.')]);
});

storeTest('keyword/reserve: carrier words are refused in any case', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const words = ['STOP', 'START', 'HELP', 'UNSTOP', 'CANCEL', 'END', 'QUIT', 'UNSUBSCRIBE', 'STOPALL', 'INFO'];
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const word of words) {
    const mixed = [...word].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join('');
    for (const Keyword of [word, word.toLowerCase(), mixed, word[0] + word.slice(1).toLowerCase()]) {
      for (const Number of ['55155', 15550100001]) {
        const res = await reserve(ctx, demo, { Keyword, Number });
        assert.equal(res.statusCode, 422, `${Keyword} on ${Number}: ${res.body}`);
        assert.equal(res.statusMessage, 'Data Validation Failed.');
        const errors = JSON.parse(res.body) as { field: string; message: string }[];
        assert.deepEqual(
          errors.map((e) => e.field),
          ['Keyword'],
          Keyword,
        );
        // 3-letter END fails the length rule first; the others are refused as carrier words.
        if (word.length >= 4) assert.equal(errors[0]!.message, 'Keyword is invalid.', Keyword);
        else assert.equal(errors[0]!.message, 'Keyword should contain at least 4 characters.', Keyword);
      }
    }
  }
  // In XML too.
  assert422(await reserve(ctx, demo, { Keyword: 'stop', Number: '55155' }, 'xml'), [fieldError('Keyword', 'Keyword is invalid.')], 'xml');
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing stored');
  // Words that merely contain a carrier word are fine.
  for (const Keyword of ['STOPS', 'HELPDESK', 'INFO2', 'STARTER']) {
    const res = await reserve(ctx, demo, { Keyword, Number: '55155' });
    assert.equal(res.statusCode, 201, `${Keyword}: ${res.body}`);
  }
});

storeTest('keyword/reserve: only POST is allowed', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const res = await call(ctx.app, {
      method,
      path: PATH,
      token: demo.token,
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: { Keyword: 'SALE', Number: '55155' } }),
    });
    assert.equal(res.statusCode, 405, method);
    assert.equal(res.headers.allow, 'POST');
  }
  assert.equal((await keywordsFromDb(ctx, demo.account.id)).length, 0);
});

storeTest('keyword/reserve: a taken keyword is reported even when another field also fails (first error of each field)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  assert.equal((await reserve(ctx, demo, { Keyword: 'Pizza', Number: '55155' })).statusCode, 201);
  const before = await snapshotAccount(ctx, demo.account.id);
  const res = await reserve(ctx, demo, { Keyword: 'PIZZA', Number: '55155', AutoreplyMessage: 12 });
  assert.equal(res.statusCode, 422, res.body);
  const errors = JSON.parse(res.body) as { field: string; message: string }[];
  const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]));
  assert.deepEqual(byField, {
    Keyword: 'Keyword "PIZZA" has already been taken.',
    AutoreplyMessage: 'Autoreply Message must be a string.',
  });
  assert.equal(errors.length, 2);
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before);
});

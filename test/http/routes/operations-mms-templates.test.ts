/**
 * mms-templates/index, view, create, update, delete (API.md §10.7), in JSON and XML, on the
 * store of each case: the record from the database, every rule with its exact message (Name, Subject,
 * Message, MediaIds: 1 to 10 media of the account), only the fields sent change, 404 for another
 * account's, Idempotency-Key; and MMS send / send-group / schedule / update-scheduled wired to
 * templates (API.md §10.6): a template of the account, the MMS price (a setting), another
 * account's template `Mms Template Id is invalid.`; the demo's MMS scheduled messages name its templates.
 */
import assert from 'node:assert/strict';
import type { TestApp } from '../../helpers/app.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, fmtTime, UNUSED_ID, WIRES } from '../../helpers/operations.ts';
import { multipart, pngImage } from '../../helpers/images.ts';
import { balanceOf } from '../../helpers/sms.ts';
import { dateTimeForms, scheduledFromDb } from '../../helpers/scheduled.ts';
import { storeTest } from '../../helpers/stores.ts';

const CREATE = '/v1/mms-templates/create';
const VIEW = '/v1/mms-templates/view';
const INDEX = '/v1/mms-templates/index';
const UPDATE = '/v1/mms-templates/update';
const DELETE = '/v1/mms-templates/delete';

async function uploadPng(ctx: TestApp, token: string, n: number): Promise<number> {
  const mp = multipart([{ name: 'file', filename: `m${n}.png`, data: pngImage(n + 1, 2, () => [n, n, n]) }]);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/media/upload?access_token=${token}`,
    headers: { 'content-type': mp.contentType },
    payload: mp.body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return JSON.parse(res.body).Id as number;
}

/** The template record from the raw rows (API.md §10.7 field order). */
async function templateFromDb(ctx: TestApp, id: number) {
  const r = await ctx.store.db.selectFrom('mms_templates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const media = await ctx.store.db
    .selectFrom('mms_template_media')
    .select('media_id')
    .where('template_id', '=', id)
    .orderBy('position')
    .execute();
  return {
    Id: r.id,
    Name: r.name,
    Subject: r.subject,
    Message: r.message,
    MediaIds: media.map((m) => m.media_id),
    DateCreated: fmtTime(Number(r.created_at)),
    DateUpdated: fmtTime(Number(r.updated_at)),
  };
}

async function templateRows(ctx: TestApp) {
  return {
    templates: await ctx.store.db.selectFrom('mms_templates').selectAll().orderBy('id').execute(),
    links: await ctx.store.db.selectFrom('mms_template_media').selectAll().orderBy('template_id').orderBy('position').execute(),
  };
}

storeTest('mms-templates create, view, index, update, delete: records from the database, Location, 204 (JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const m1 = await uploadPng(ctx, demo.token, 1);
  const m2 = await uploadPng(ctx, demo.token, 2);
  for (const wire of WIRES) {
    const res = await call(ctx.app, {
      method: 'POST',
      path: CREATE,
      token: demo.token,
      wire,
      body: { Name: 'Autumn sale', Subject: 'Sale!', Message: 'Up to 50% off', MediaIds: [m2, `${m1}`, m2] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = Number(/"Id":(\d+)|<Id>(\d+)<\/Id>/.exec(res.body)!.slice(1).find(Boolean));
    const record = await templateFromDb(ctx, id);
    assert.deepEqual(record.MediaIds, [m2, m1], 'the order sent, a repeated id once');
    assertBody(res, wire, 201, record);
    assert.equal(res.headers.location, `http://localhost:80${VIEW}?id=${id}`);
    assertBody(await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${id}` }), wire, 200, record);
    // Only the fields sent change.
    const upd = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { Subject: '' } });
    const changed = await templateFromDb(ctx, id);
    assert.deepEqual({ ...changed, DateUpdated: '' }, { ...record, Subject: '', DateUpdated: '' });
    assertBody(upd, wire, 200, changed);
    const put = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { MediaIds: [m1] } });
    assertBody(put, wire, 200, { ...(await templateFromDb(ctx, id)) });
    assert.deepEqual((await templateFromDb(ctx, id)).MediaIds, [m1]);
    assert.equal((await templateFromDb(ctx, id)).Name, 'Autumn sale');
  }
  const ids = (
    await ctx.store.db.selectFrom('mms_templates').select('id').where('account_id', '=', demo.account.id).orderBy('id').execute()
  ).map((r) => r.id);
  const all = [];
  for (const id of ids) all.push(await templateFromDb(ctx, id));
  for (const wire of WIRES) {
    const list = await call(ctx.app, { path: INDEX, token: demo.token, wire });
    assertBody(list, wire, 200, all);
    assert.equal(list.headers['x-pagination-total-count'], String(ids.length));
  }
  const del = await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token, query: `id=${ids[0]}` });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assertError(await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${ids[0]}` }), 404, `Object not found: ${ids[0]}`);
  assert.equal(
    (await ctx.store.db.selectFrom('mms_template_media').select('media_id').where('template_id', '=', ids[0]!).execute()).length,
    0,
  );
  // The media stays.
  assert.equal((await call(ctx.app, { path: '/v1/media/view', token: demo.token, query: `id=${m1}` })).statusCode, 200);
});

storeTest('mms-templates/update: the stored values again leave DateUpdated; a field or MediaIds change moves it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const PAST = 1_000_000_000;
  const [m1, m2] = [await uploadPng(ctx, demo.token, 1), await uploadPng(ctx, demo.token, 2)];
  const every = { Name: 'Same template', Subject: '', Message: 'Same message', MediaIds: [m1, m2] };
  const created = await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: every });
  const id = (JSON.parse(created.body) as { Id: number }).Id;
  const past = () => ctx.store.db.updateTable('mms_templates').set({ updated_at: PAST }).where('id', '=', id).execute();
  for (const [i, body] of [every, { Subject: null, MediaIds: [`${m1}`, m2, m1] }, { Message: 'Same message' }].entries()) {
    await past();
    const wire = WIRES[i]!;
    const res = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body });
    const record = await templateFromDb(ctx, id);
    assert.equal(record.DateUpdated, fmtTime(PAST), `${JSON.stringify(body)}: nothing saved`);
    assertBody(res, wire, 200, record);
  }
  for (const body of [{ Subject: 'New subject' }, { MediaIds: [m2, m1] }, { MediaIds: [m1] }]) {
    await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}`, body: every });
    await past();
    const before = Math.floor(Date.now() / 1000);
    const res = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body });
    const record = await templateFromDb(ctx, id);
    assert.ok(record.DateUpdated >= fmtTime(before), `${JSON.stringify(body)}: DateUpdated moves`);
    assertBody(res, 'json', 200, record);
  }
});
storeTest('mms-templates rules (API.md §10.7): exact messages in field order, JSON and XML, nothing written', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const mine = await uploadPng(ctx, demo.token, 1);
  const theirs = await uploadPng(ctx, other.token, 2);
  const eleven: number[] = [];
  for (let i = 0; i < 11; i++) eleven.push(await uploadPng(ctx, demo.token, i + 3));
  const ok = { Name: 'Promo', MediaIds: [mine] };
  const cases = [
    {
      name: 'empty body',
      body: {},
      errors: [fieldError('Name', 'Name cannot be blank.'), fieldError('MediaIds', 'Media Ids cannot be blank.')],
    },
    { name: 'Name blank', body: { ...ok, Name: '  ' }, errors: [fieldError('Name', 'Name cannot be blank.')] },
    { name: 'Name short', body: { ...ok, Name: 'ab' }, errors: [fieldError('Name', 'Name should contain at least 3 characters.')] },
    {
      name: 'Name long',
      body: { ...ok, Name: 'x'.repeat(65) },
      errors: [fieldError('Name', 'Name should contain at most 64 characters.')],
    },
    { name: 'Name not a string', body: { ...ok, Name: 123 }, errors: [fieldError('Name', 'Name must be a string.')] },
    {
      name: 'Subject long',
      body: { ...ok, Subject: 's'.repeat(256) },
      errors: [fieldError('Subject', 'Subject should contain at most 255 characters.')],
    },
    {
      name: 'Message long',
      body: { ...ok, Message: 'm'.repeat(1601) },
      errors: [fieldError('Message', 'Message should contain at most 1,600 characters.')],
    },
    { name: 'MediaIds empty', body: { ...ok, MediaIds: [] }, errors: [fieldError('MediaIds', 'Media Ids cannot be blank.')] },
    { name: 'MediaIds not a list', body: { ...ok, MediaIds: 'abc' }, errors: [fieldError('MediaIds', 'Media Ids is invalid.')] },
    {
      name: 'MediaIds of another account',
      body: { ...ok, MediaIds: [mine, theirs] },
      errors: [fieldError('MediaIds', 'Media Ids is invalid.')],
    },
    { name: 'MediaIds unknown', body: { ...ok, MediaIds: [UNUSED_ID] }, errors: [fieldError('MediaIds', 'Media Ids is invalid.')] },
    { name: 'MediaIds zero', body: { ...ok, MediaIds: [0] }, errors: [fieldError('MediaIds', 'Media Ids is invalid.')] },
    { name: 'MediaIds eleven', body: { ...ok, MediaIds: eleven }, errors: [fieldError('MediaIds', 'Media Ids is invalid.')] },
    {
      name: 'everything wrong',
      body: { Name: 'a', Subject: 's'.repeat(256), Message: 'm'.repeat(1601), MediaIds: [theirs] },
      errors: [
        fieldError('Name', 'Name should contain at least 3 characters.'),
        fieldError('Subject', 'Subject should contain at most 255 characters.'),
        fieldError('Message', 'Message should contain at most 1,600 characters.'),
        fieldError('MediaIds', 'Media Ids is invalid.'),
      ],
    },
  ];
  const before = await templateRows(ctx);
  for (const c of cases) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, wire, body: c.body });
      try {
        assert422(res, c.errors, wire);
      } catch (err) {
        (err as Error).message = `case "${c.name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
    }
  }
  assert.deepEqual(await templateRows(ctx), before);
  // Ten is allowed.
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: { ...ok, MediaIds: eleven.slice(0, 10) } })).statusCode,
    201,
  );
  // update: a required field may be left out, not sent blank; 404 before 422; another account's is 404.
  const id = JSON.parse((await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: ok })).body).Id as number;
  const snapshot = await templateRows(ctx);
  for (const wire of WIRES) {
    assert422(
      await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { Name: '', MediaIds: [] } }),
      [fieldError('Name', 'Name cannot be blank.'), fieldError('MediaIds', 'Media Ids cannot be blank.')],
      wire,
    );
    assert422(
      await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { MediaIds: [theirs] } }),
      [fieldError('MediaIds', 'Media Ids is invalid.')],
      wire,
    );
    assertError(
      await call(ctx.app, { method: 'PUT', path: UPDATE, token: other.token, wire, query: `id=${id}`, body: { Name: '' } }),
      404,
      `Object not found: ${id}`,
      wire,
    );
    for (const [method, path] of [
      ['GET', VIEW],
      ['DELETE', DELETE],
    ] as const) {
      assertError(await call(ctx.app, { method, path, token: other.token, wire, query: `id=${id}` }), 404, `Object not found: ${id}`, wire);
      assertError(await call(ctx.app, { method, path, token: demo.token, wire }), 400, 'Missing required parameters: id', wire);
      assertError(
        await call(ctx.app, { method, path, token: demo.token, wire, query: 'id=abc' }),
        400,
        'Invalid data received for parameter "id".',
        wire,
      );
    }
  }
  assert.deepEqual(await templateRows(ctx), snapshot);
});

storeTest('mms-templates/create honours Idempotency-Key', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const m = await uploadPng(ctx, demo.token, 1);
  const send = () =>
    ctx.app.inject({
      method: 'POST',
      url: `${CREATE}?access_token=${demo.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'tpl-1' },
      payload: { Name: 'Once', MediaIds: [m] },
    });
  const first = await send();
  assert.equal(first.statusCode, 201);
  const before = await templateRows(ctx);
  const again = await send();
  assert.equal(again.statusCode, 201);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.body, first.body);
  assert.deepEqual(await templateRows(ctx), before);
});

storeTest(
  'MMS send, send-group, schedule and update-scheduled name a template of the account and cost the MMS price (API.md §10.6, §10.7)',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_MMS_CREDITS: '5' });
    const demo = await ctx.seed();
    const other = await ctx.seed('Other account');
    const mine = JSON.parse(
      (
        await call(ctx.app, {
          method: 'POST',
          path: CREATE,
          token: demo.token,
          body: { Name: 'Mine', MediaIds: [await uploadPng(ctx, demo.token, 1)] },
        })
      ).body,
    ).Id as number;
    const theirs = JSON.parse(
      (
        await call(ctx.app, {
          method: 'POST',
          path: CREATE,
          token: other.token,
          body: { Name: 'Theirs', MediaIds: [await uploadPng(ctx, other.token, 2)] },
        })
      ).body,
    ).Id as number;
    for (const wire of WIRES) {
      const balance = await balanceOf(ctx, demo.account.id);
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: demo.token,
        wire,
        body: { MobilePhone: '+15551234567', Type_Id: 2, MmsTemplateId: `${mine}` },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.match(
        res.body,
        wire === 'json'
          ? /"Type_Id":2,"Type_Description":"MMS".*"Credits":5,/
          : /<Type_Id>2<\/Type_Id><Type_Description>MMS<\/Type_Description>.*<Credits>5<\/Credits>/,
      );
      assert.doesNotMatch(res.body, /MmsTemplateId/, 'the Message record does not carry the template');
      assert.equal(await balanceOf(ctx, demo.account.id), balance - 5);
      for (const bad of [theirs, UNUSED_ID]) {
        assert422(
          await call(ctx.app, {
            method: 'POST',
            path: '/v1/sms/send',
            token: demo.token,
            wire,
            body: { MobilePhone: '+15551234567', Type_Id: 2, MmsTemplateId: bad },
          }),
          [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
          wire,
        );
      }
      assert.equal(await balanceOf(ctx, demo.account.id), balance - 5);
    }
    // send-group: every recipient pays the MMS price.
    const group = await ctx.store.db
      .selectFrom('groups')
      .select('id')
      .where('account_id', '=', demo.account.id)
      .where('name', '=', 'Staff')
      .executeTakeFirstOrThrow();
    const g = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send-group',
      token: demo.token,
      body: { GroupId: group.id, Type_Id: 2, MmsTemplateId: mine },
    });
    assert.equal(g.statusCode, 201, g.body);
    const batch = JSON.parse(g.body) as { Recipients: number; Credits: number };
    assert.equal(batch.Credits, batch.Recipients * 5);
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send-group',
        token: demo.token,
        body: { GroupId: group.id, Type_Id: 2, MmsTemplateId: theirs },
      }),
      [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    );

    // schedule: the template is stored and shown.
    const when = dateTimeForms(Math.floor(Date.now() / 1000) + 3600).dashes;
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/schedule',
        token: demo.token,
        wire,
        body: { MobilePhone: '+15551234567', DateTime: when, Type_Id: 2, MmsTemplateId: mine, Subject: 'Pic' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = Number(/"Id":(\d+)|<Id>(\d+)<\/Id>/.exec(res.body)!.slice(1).find(Boolean));
      const record = await scheduledFromDb(ctx, id);
      assert.equal(record.MmsTemplateId, mine);
      // API.md §14.3.3: the schedule reply adds RRule ("" when none) as its last field.
      assertBody(res, wire, 201, { ...record, RRule: '' });
      assert422(
        await call(ctx.app, {
          method: 'POST',
          path: '/v1/sms/schedule',
          token: demo.token,
          wire,
          body: { MobilePhone: '+15551234567', DateTime: when, Type_Id: 2, MmsTemplateId: theirs },
        }),
        [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
        wire,
      );
      // update-scheduled: another template of the account; another account's is invalid; to SMS drops it.
      const second = JSON.parse(
        (
          await call(ctx.app, {
            method: 'POST',
            path: CREATE,
            token: demo.token,
            body: { Name: `Second ${wire}`, MediaIds: [await uploadPng(ctx, demo.token, 3)] },
          })
        ).body,
      ).Id as number;
      const upd = await call(ctx.app, {
        method: 'PATCH',
        path: '/v1/sms/update-scheduled',
        token: demo.token,
        wire,
        query: `id=${id}`,
        body: { MmsTemplateId: second },
      });
      assert.equal(upd.statusCode, 200, upd.body);
      assert.equal((await scheduledFromDb(ctx, id)).MmsTemplateId, second);
      assert422(
        await call(ctx.app, {
          method: 'PATCH',
          path: '/v1/sms/update-scheduled',
          token: demo.token,
          wire,
          query: `id=${id}`,
          body: { MmsTemplateId: theirs },
        }),
        [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
        wire,
      );
      const keep = await call(ctx.app, {
        method: 'PATCH',
        path: '/v1/sms/update-scheduled',
        token: demo.token,
        wire,
        query: `id=${id}`,
        body: { Subject: 'Kept template' },
      });
      assert.equal(keep.statusCode, 200);
      assert.equal((await scheduledFromDb(ctx, id)).MmsTemplateId, second);
      await call(ctx.app, {
        method: 'PATCH',
        path: '/v1/sms/update-scheduled',
        token: demo.token,
        wire,
        query: `id=${id}`,
        body: { Type_Id: 1, Message: 'plain' },
      });
      assert.equal((await scheduledFromDb(ctx, id)).MmsTemplateId, '');
    }
  },
);

storeTest("the demo's MMS scheduled messages name templates of the demo account, whose media exist", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const mms = demo.scheduledMessages.filter((m) => m.Type_Id === 2);
  assert.ok(mms.length > 0);
  for (const m of mms) {
    const res = await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${String(m.MmsTemplateId)}` });
    assert.equal(res.statusCode, 200, `template ${String(m.MmsTemplateId)}`);
    for (const mediaId of JSON.parse(res.body).MediaIds as number[]) {
      const dl = await ctx.app.inject({ url: `/v1/media/download?id=${mediaId}&access_token=${demo.token}` });
      assert.equal(dl.statusCode, 200);
      assert.equal(dl.headers['content-type'], 'image/png');
      assert.deepEqual([...dl.rawPayload.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    }
  }
});

/**
 * API.md §10.7, last rule: a template whose media have all been deleted cannot be sent. On each
 * store: `sms/send`, `sms/send-group` and `sms/preview` answer 422
 * `[{"field":"MmsTemplateId","message":"Mms Template Id is invalid."}]` with nothing debited or
 * stored (JSON and XML), while a template that still holds one medium sends; a scheduled MMS that
 * names such a template (or a deleted one) becomes Action Required at its check, reason
 * `NO_MEDIA`, nothing reserved, and is never sent; deleting the last medium (or the template) sends
 * the Approved ones back to Pending with their reservation released, so they are checked again; an
 * MMS already queued is not taken back (docs/API.md §10.7): it goes out with no media, its price
 * kept. Expected values come from the database, never from src's mappers.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import type { OutboundMessage } from '../../../src/dispatch/carrier.ts';
import { createSandboxCarrier } from '../../../src/dispatch/sandbox.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { cancelDemoScheduled, dateTimeForms, schedule, stateOf, testScheduler } from '../../helpers/scheduled.ts';
import { balanceOf, countMessages, createMmsTemplate, messageFromDb, testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const RECIPIENT = '+15551234567';
const INVALID = [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')];

/** The template's MediaIds, in order, from the database. */
async function mediaOf(ctx: TestApp, templateId: number): Promise<number[]> {
  const rows = await ctx.store.db
    .selectFrom('mms_template_media')
    .select('media_id')
    .where('template_id', '=', templateId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.media_id);
}

async function deleteMedia(ctx: TestApp, demo: DemoAccount, id: number): Promise<void> {
  const res = await call(ctx.app, { method: 'DELETE', path: '/v1/media/delete', token: demo.token, query: `id=${id}` });
  assert.equal(res.statusCode, 204, res.body);
}

/** What `Status reason reserved` a scheduled message is in, or `gone`. */
async function statusOf(ctx: TestApp, id: number): Promise<string> {
  const s = await stateOf(ctx, id);
  return s ? `${s.status}${s.reason ? ` ${s.reason}` : ''} reserved ${s.reserved}` : 'gone';
}

async function countBatches(ctx: TestApp, accountId: number): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('batches')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

storeTest(
  'API.md §10.7: once its media are all deleted a template cannot be sent: send, send-group and preview give 422 on MmsTemplateId, nothing debited or stored (JSON, XML)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    // Template `two` holds two media (its own, and `other`'s): deleting one leaves it sendable.
    const two = await createMmsTemplate(ctx, demo, 'Look at this!');
    const other = await createMmsTemplate(ctx, demo, 'And this');
    const [first] = await mediaOf(ctx, two);
    const [second] = await mediaOf(ctx, other);
    const update = await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/mms-templates/update',
      token: demo.token,
      query: `id=${two}`,
      body: { MediaIds: [first, second] },
    });
    assert.equal(update.statusCode, 200, update.body);
    const group = demo.groups.find((g) => g.PhoneNumberIds.length > 0)!;
    const bodies = (templateId: number) =>
      [
        ['/v1/sms/send', { MobilePhone: RECIPIENT, Type_Id: 2, MmsTemplateId: templateId }, 201],
        ['/v1/sms/send-group', { GroupId: group.Id, Type_Id: 2, MmsTemplateId: templateId }, 201],
        ['/v1/sms/preview', { MobilePhone: RECIPIENT, Type_Id: 2, MmsTemplateId: templateId }, 200],
      ] as const;

    await deleteMedia(ctx, demo, first!);
    assert.deepEqual(await mediaOf(ctx, two), [second], 'one medium left');
    for (const [path, body, status] of bodies(two)) {
      const res = await call(ctx.app, { method: 'POST', path, token: demo.token, body });
      assert.equal(res.statusCode, status, `${path}: a template with one medium left is sent: ${res.body}`);
    }

    await deleteMedia(ctx, demo, second!);
    assert.deepEqual(await mediaOf(ctx, two), [], 'no medium left');
    assert.deepEqual(await mediaOf(ctx, other), []);
    const balance = await balanceOf(ctx, demo.account.id);
    const messages = await countMessages(ctx, demo.account.id);
    const batches = await countBatches(ctx, demo.account.id);
    for (const templateId of [two, other]) {
      for (const [path, body] of bodies(templateId)) {
        for (const wire of WIRES) {
          const res = await call(ctx.app, { method: 'POST', path, token: demo.token, body, wire });
          assert422(res, INVALID, wire);
        }
        // The same for a PhoneNumberId recipient and an explicit Number: the template's rule decides.
        if (path !== '/v1/sms/send-group') {
          const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
          const res = await call(ctx.app, {
            method: 'POST',
            path,
            token: demo.token,
            body: { PhoneNumberId: contact.Id, Number: 55155, Type_Id: 2, MmsTemplateId: templateId },
          });
          assert.equal(res.body, JSON.stringify(INVALID));
          assert.equal(res.statusCode, 422);
        }
      }
    }
    assert.equal(await balanceOf(ctx, demo.account.id), balance, 'nothing debited');
    assert.equal(await countMessages(ctx, demo.account.id), messages, 'nothing queued');
    assert.equal(await countBatches(ctx, demo.account.id), batches, 'no batch');
    // The template itself is still there, with no MediaIds, and an SMS naming it is unaffected.
    const view = await call(ctx.app, { path: '/v1/mms-templates/view', token: demo.token, query: `id=${two}` });
    assert.deepEqual((JSON.parse(view.body) as { MediaIds: number[] }).MediaIds, []);
    const sms = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: RECIPIENT, Message: 'plain', Type_Id: 1, MmsTemplateId: two },
    });
    assert.equal(sms.statusCode, 201, sms.body);
  },
);

storeTest(
  'API.md §10.7, §11.7: a scheduled MMS whose template has no medium left (or is deleted) becomes Action Required NO_MEDIA at its check, nothing reserved, and is never sent',
  async (t) => {
    const clock = createManualClock();
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const scheduler = testScheduler(ctx, clock);
    await cancelDemoScheduled(ctx, demo); // the rounds below hold this test's messages only
    const at = (hours: number) => dateTimeForms(clock.nowSeconds() + hours * 3600).iso;
    const mms = (templateId: number, hours: number) =>
      schedule(ctx, demo.token, { MobilePhone: RECIPIENT, Type_Id: 2, MmsTemplateId: templateId, DateTime: at(hours) });

    const emptied = await createMmsTemplate(ctx, demo, 'Spring!');
    const deleted = await createMmsTemplate(ctx, demo, 'Summer!');
    const kept = await createMmsTemplate(ctx, demo, 'Autumn!');
    const approved = await mms(emptied, 1);
    const approvedOfDeleted = await mms(deleted, 1);
    const approvedKept = await mms(kept, 1);
    const sms = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, Message: 'text', DateTime: at(1) });
    assert.deepEqual((await scheduler.drain()).approved, 4);
    for (const id of [approved, approvedOfDeleted, approvedKept]) assert.equal(await statusOf(ctx, id), '3 reserved 3');
    const pending = await mms(emptied, 2); // not checked yet
    const start = await balanceOf(ctx, demo.account.id);

    // The last medium goes: the approved MMS naming the template is Pending again, its 3 credits released.
    await deleteMedia(ctx, demo, (await mediaOf(ctx, emptied))[0]!);
    assert.equal(await statusOf(ctx, approved), '1 reserved 0');
    assert.equal(await statusOf(ctx, pending), '1 reserved 0');
    assert.equal(await balanceOf(ctx, demo.account.id), start + 3, 'the reservation is released');
    // The template goes: the same for the MMS naming it.
    const del = await call(ctx.app, { method: 'DELETE', path: '/v1/mms-templates/delete', token: demo.token, query: `id=${deleted}` });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal(await statusOf(ctx, approvedOfDeleted), '1 reserved 0');
    assert.equal(await balanceOf(ctx, demo.account.id), start + 6);
    // Scheduling an MMS that names the emptied template is accepted (Pending): its check decides.
    const late = await mms(emptied, 3);
    assert.equal(await statusOf(ctx, late), '1 reserved 0');

    const round = await scheduler.runOnce();
    assert.deepEqual([round.claimed, round.approved, round.actionRequired], [4, 0, 4]);
    for (const id of [approved, pending, approvedOfDeleted, late]) assert.equal(await statusOf(ctx, id), '2 NO_MEDIA reserved 0');
    assert.equal(await statusOf(ctx, approvedKept), '3 reserved 3', 'a template that still has its medium is untouched');
    assert.equal(await statusOf(ctx, sms), '3 reserved 1');
    assert.equal(await balanceOf(ctx, demo.account.id), start + 6, 'nothing reserved for them');
    const record = JSON.parse((await call(ctx.app, { path: '/v1/sms/view-scheduled', token: demo.token, query: `id=${approved}` })).body);
    assert.deepEqual([record.Status_Id, record.Status_Description], [2, 'Action Required']);

    // Credits added check them again: still no medium, still Action Required.
    await ctx.store.db
      .updateTable('credit_balances')
      .set({ available_credits: 10_000 })
      .where('account_id', '=', demo.account.id)
      .execute();
    await scheduler.drain();
    for (const id of [approved, pending, approvedOfDeleted, late]) assert.equal(await statusOf(ctx, id), '2 NO_MEDIA reserved 0');

    // Past their time: the others are sent; these stay listed, unsent.
    clock.advance(4 * 3600 * 1000);
    await scheduler.drain();
    for (const id of [approved, pending, approvedOfDeleted, late]) {
      assert.equal(await statusOf(ctx, id), '2 NO_MEDIA reserved 0');
      const sent = await ctx.store.db.selectFrom('messages').select('id').where('scheduled_message_id', '=', id).execute();
      assert.equal(sent.length, 0, `scheduled message ${id} is never sent`);
    }
    for (const id of [approvedKept, sms]) assert.equal(await statusOf(ctx, id), 'gone', 'sent at its time');
  },
);

storeTest(
  'docs/API.md §10.7: an MMS queued before its template lost its last medium is not taken back: it goes out with no media, its price kept',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const template = await createMmsTemplate(ctx, demo, 'Queued picture');
    const before = await balanceOf(ctx, demo.account.id);
    const res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: RECIPIENT, Type_Id: 2, MmsTemplateId: template },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
    assert.equal(await balanceOf(ctx, demo.account.id), before - 3);
    await deleteMedia(ctx, demo, (await mediaOf(ctx, template))[0]!);

    const handed: OutboundMessage[] = [];
    const carrier = createSandboxCarrier({ receiptMs: 1000, onSubmit: (m) => handed.push(m) });
    const { dispatcher } = testDispatcher(ctx, { carrier });
    await dispatcher.drain();
    assert.deepEqual(
      handed.map((m) => [m.id, m.text, m.mediaIds]),
      [[id, 'Queued picture', []]],
    );
    const message = await messageFromDb(ctx, id);
    assert.deepEqual([message.Status_Description, message.ErrorCode, message.Credits], ['Sent', '', 3]);
    assert.equal(await balanceOf(ctx, demo.account.id), before - 3, 'not refunded');
  },
);

/**
 * `RRule` and `ShortenLinks` on sms/schedule and sms/update-scheduled (API.md §10.6), over
 * inject, JSON and XML, on each store: the record of schedule, view-scheduled and update-scheduled
 * with `RRule` last (`""` when none, stored and shown exactly as sent); every bad rule is 422 `R
 * Rule is invalid.` in API.md §10.6 field order (RRule after Number, ShortenLinks last) — by
 * example and by property over random rule-like strings — and writes nothing; a rule with no
 * occurrence from DateTime (UNTIL before it), on schedule and on an update that moves DateTime
 * under a kept rule.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createManualClock } from '../../../src/lib/time.ts';
import { parseRRule } from '../../../src/domain/recurrence.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { SCHEDULE, UPDATE, VIEW, dateTimeForms, lastScheduledId, schedule } from '../../helpers/scheduled.ts';
import { recordFromDb } from '../../helpers/recurring.ts';
import { storeTest } from '../../helpers/stores.ts';

const RECIPIENT = '+15551234567';
const INVALID = fieldError('RRule', 'R Rule is invalid.');

async function setup(t: { after(fn: () => unknown): void }, overrides: Record<string, string> = {}) {
  const clock = createManualClock(Date.UTC(2026, 2, 20, 12));
  const ctx = await buildTestApp(t, overrides, { clock });
  const demo = await ctx.seed();
  const when = dateTimeForms(clock.nowSeconds() + 86_400).colons; // 2026:03:21 12:00:00 UTC
  return { ctx, demo, clock, when };
}

const count = async (ctx: Awaited<ReturnType<typeof setup>>['ctx']) =>
  (await ctx.store.db.selectFrom('scheduled_messages').select('id').execute()).length;

storeTest('schedule, view-scheduled, update-scheduled show RRule last, exactly as sent ("" when none) (JSON, XML)', async (t) => {
  const { ctx, demo, when } = await setup(t);
  for (const wire of WIRES) {
    for (const rule of ['FREQ=WEEKLY;BYDAY=MO;COUNT=10', 'freq=monthly;bymonthday=-1', '']) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: SCHEDULE,
        token: demo.token,
        wire,
        body: { MobilePhone: RECIPIENT, DateTime: when, RRule: rule },
      });
      const id = await lastScheduledId(ctx, demo.account.id);
      const record = await recordFromDb(ctx, id);
      assert.equal(record.RRule, rule);
      assertBody(res, wire, 201, record);
      assertBody(await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${id}` }), wire, 200, record);
    }
    const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, DateTime: when });
    assert.equal((await recordFromDb(ctx, id)).RRule, '', 'none when not sent');
    const upd = await call(ctx.app, {
      method: 'PATCH',
      path: UPDATE,
      token: demo.token,
      wire,
      query: `id=${id}`,
      body: { RRule: 'FREQ=DAILY;UNTIL=20260401T000000Z' },
    });
    assertBody(upd, wire, 200, await recordFromDb(ctx, id));
    assert.equal((await recordFromDb(ctx, id)).RRule, 'FREQ=DAILY;UNTIL=20260401T000000Z');
    const cleared = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { RRule: '' } });
    assertBody(cleared, wire, 200, { ...(await recordFromDb(ctx, id)), RRule: '' });
  }
});

storeTest(
  'a bad RRule is 422 `R Rule is invalid.` in field order (after Number, before ShortenLinks), JSON and XML; nothing written',
  async (t) => {
    const { ctx, demo, when } = await setup(t);
    const before = await count(ctx);
    const bad: unknown[] = [
      'FREQ=HOURLY',
      'FREQ=DAILY;COUNT=2;UNTIL=20261231',
      'FREQ=DAILY;BYMONTH=1',
      'FREQ=DAILY;COUNT=0',
      'FREQ=DAILY;COUNT=1;COUNT=2',
      'FREQ=WEEKLY;BYDAY=1MO',
      'RRULE:FREQ=DAILY',
      'FREQ=DAILY;UNTIL=20260301', // before DateTime: no occurrence
      'FREQ=DAILY;INTERVAL=7;BYDAY=SU', // from a Saturday every 7 days: never a Sunday
      `FREQ=DAILY;BYMONTHDAY=${Array(118).fill('1').join(',')}`, // 257 characters
      ' ',
      null,
      5,
      ['FREQ=DAILY'],
      { FREQ: 'DAILY' },
    ];
    for (const wire of WIRES) {
      for (const rule of bad) {
        if (wire !== 'json' && typeof rule !== 'string') continue;
        const res = await call(ctx.app, {
          method: 'POST',
          path: SCHEDULE,
          token: demo.token,
          wire,
          body: { MobilePhone: RECIPIENT, DateTime: when, RRule: rule },
        });
        assert422(res, [INVALID], wire);
      }
      // Field order: every field's error, RRule after Number, ShortenLinks last.
      const all = await call(ctx.app, {
        method: 'POST',
        path: SCHEDULE,
        token: demo.token,
        wire,
        body: { ShortenLinks: 7, RRule: 'FREQ=NEVER', Number: 'x', DateTime: 'soon', MobilePhone: '' },
      });
      assert422(
        all,
        [
          fieldError('MobilePhone', 'Mobile Phone cannot be blank.'),
          fieldError('DateTime', 'The format of Date Time is invalid.'),
          fieldError('Number', 'Number must be an integer.'),
          INVALID,
          fieldError('ShortenLinks', 'Shorten Links is invalid.'),
        ],
        wire,
      );
    }
    assert.equal(await count(ctx), before, 'nothing written');
  },
);

storeTest(
  'update-scheduled: a bad RRule is 422 and changes nothing; DateTime moved past a kept rule’s UNTIL is `R Rule is invalid.`',
  async (t) => {
    const { ctx, demo, clock, when } = await setup(t);
    const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, DateTime: when, RRule: 'FREQ=DAILY;UNTIL=20260325' });
    const before = await recordFromDb(ctx, id);
    for (const wire of WIRES) {
      for (const body of [
        { RRule: 'FREQ=SECONDLY' },
        { RRule: 'FREQ=DAILY;UNTIL=20260320' },
        { DateTime: dateTimeForms(clock.nowSeconds() + 10 * 86_400).colons },
      ]) {
        assert422(
          await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body }),
          [INVALID],
          wire,
        );
      }
    }
    assert.deepEqual(await recordFromDb(ctx, id), before);
    // Both at once: the new rule counts from the new DateTime.
    const ok = await call(ctx.app, {
      method: 'PATCH',
      path: UPDATE,
      token: demo.token,
      query: `id=${id}`,
      body: { DateTime: dateTimeForms(clock.nowSeconds() + 10 * 86_400).colons, RRule: 'FREQ=DAILY;UNTIL=20260401' },
    });
    assert.equal(ok.statusCode, 200, ok.body);
  },
);

storeTest(
  'property: random rule-like RRule strings are accepted only when they read as a rule ("" is none); a 422 is never a 500',
  async (t) => {
    const { ctx, demo, when } = await setup(t);
    const part = fc.oneof(
      fc.constantFrom(
        'FREQ=DAILY',
        'FREQ=WEEKLY',
        'FREQ=MONTHLY',
        'FREQ=YEARLY',
        'FREQ=HOURLY',
        'COUNT=3',
        'COUNT=0',
        'INTERVAL=2',
        'BYDAY=MO,FR',
        'BYDAY=-1FR',
        'BYMONTHDAY=31',
        'UNTIL=20270101',
        'UNTIL=20260101T000000Z',
        'WKST=MO',
        'BYMONTH=2',
      ),
      fc.string({ maxLength: 10 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(part, { minLength: 1, maxLength: 4 }), async (parts) => {
        const rule = parts.join(';');
        const res = await call(ctx.app, {
          method: 'POST',
          path: SCHEDULE,
          token: demo.token,
          body: { MobilePhone: RECIPIENT, DateTime: when, RRule: rule },
        });
        if (res.statusCode === 201) {
          assert.ok(rule === '' || parseRRule(rule), rule);
          assert.equal((JSON.parse(res.body) as { RRule: string }).RRule, rule);
        } else assert422(res, [INVALID]);
      }),
      { numRuns: 150 },
    );
  },
);

storeTest('ShortenLinks on schedule/update: 0 or 1; 1 needs MSGSVC_LINK_DOMAIN; stored, not shown', async (t) => {
  const { ctx, demo, when } = await setup(t, { MSGSVC_LINK_DOMAIN: 'https://l.example' });
  const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, DateTime: when, Message: 'https://a.example', ShortenLinks: 1 });
  const row = await ctx.store.db.selectFrom('scheduled_messages').select('shorten_links').where('id', '=', id).executeTakeFirstOrThrow();
  assert.equal(row.shorten_links, 1);
  const view = JSON.parse((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` })).body) as Record<string, unknown>;
  assert.ok(!('ShortenLinks' in view));
  for (const wire of WIRES)
    assert422(
      await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, query: `id=${id}`, body: { ShortenLinks: 2 } }),
      [fieldError('ShortenLinks', 'Shorten Links is invalid.')],
      wire,
    );
  const off = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { ShortenLinks: 0 } });
  assert.equal(off.statusCode, 200);
  const after = await ctx.store.db.selectFrom('scheduled_messages').select('shorten_links').where('id', '=', id).executeTakeFirstOrThrow();
  assert.equal(after.shorten_links, 0);
  const kept = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Message: 'x' } });
  assert.equal(kept.statusCode, 200);
});

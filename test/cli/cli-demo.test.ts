import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, withToken } from '../helpers/app.ts';
import { runCli, tempDir } from '../helpers/cli.ts';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createManualClock } from '../../src/lib/time.ts';
import { testScheduler } from '../helpers/scheduled.ts';

const DATE_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
const SCHEDULE_DATE_TIME = /^\d{4}:\d\d:\d\d \d\d:\d\d:\d\d$/;

function parseDemo(stdout: string): DemoAccount {
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, `demo --json should print one line, got ${lines.length}`);
  const value = JSON.parse(lines[0]!) as unknown;
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), 'demo --json prints ONE JSON object');
  return value as DemoAccount;
}

describe('msgsvc demo', { concurrency: true }, () => {
  test('demo --json prints one object describing a complete sample account; a second run makes another account', async (t) => {
    const { dir, dbPath } = tempDir(t);
    const env = { DATABASE_URL: dbPath, MSGSVC_DEMO: '0' };
    const first = await runCli(['demo', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const demo = parseDemo(first.stdout);

    assert.deepEqual(Object.keys(demo).sort(), [
      'account',
      'contacts',
      'customFieldEntries',
      'customFields',
      'groups',
      'numbers',
      'scheduledMessages',
      'token',
    ]);
    assert.ok(Number.isInteger(demo.account.id) && demo.account.id > 0);
    assert.equal(typeof demo.account.name, 'string');
    assert.match(demo.token, /^[A-Za-z0-9_-]{32,}$/);

    // Numbers: all four statuses; Blocked_Date only for the blocked ones.
    assert.deepEqual(
      [...new Set(demo.numbers.map((n) => n.Status_Id))].sort((a, b) => a - b),
      [0, 1, 301, 302],
    );
    for (const n of demo.numbers) {
      assert.deepEqual(Object.keys(n), ['Number', 'Status_Id', 'Status_Description', 'Blocked_Date']);
      if (n.Status_Id === 301 || n.Status_Id === 302) assert.match(String(n.Blocked_Date), DATE_TIME);
      else assert.equal(n.Blocked_Date, null);
    }

    // Contacts: about 50, some without birthday, email or city; some in two or more groups.
    assert.ok(demo.contacts.length >= 45 && demo.contacts.length <= 55, `contacts: ${demo.contacts.length}`);
    assert.ok(
      demo.contacts.some((c) => c.BirthDay === '0000-00-00'),
      'some contact lacks a birthday',
    );
    assert.ok(
      demo.contacts.some((c) => /^\d{4}-\d\d-\d\d$/.test(c.BirthDay) && c.BirthDay !== '0000-00-00'),
      'some contact has a birthday',
    );
    assert.ok(
      demo.contacts.some((c) => c.Email === ''),
      'some contact lacks an email',
    );
    assert.ok(
      demo.contacts.some((c) => c.City === ''),
      'some contact lacks a city',
    );
    assert.ok(
      demo.contacts.some((c) => c.GroupIds.length >= 2),
      'some contact is in two or more groups',
    );
    assert.equal(new Set(demo.contacts.map((c) => c.Number)).size, demo.contacts.length, 'contact numbers are unique');
    for (const c of demo.contacts) {
      assert.deepEqual(Object.keys(c), [
        'Id',
        'Number',
        'OptedOut',
        'FirstName',
        'LastName',
        'BirthDay',
        'Email',
        'Zip',
        'City',
        'DateCreated',
        'DateUpdated',
        'GroupIds',
        'CustomFieldIds',
      ]);
      assert.match(c.DateCreated, DATE_TIME);
    }

    // Groups reference real contacts, and contacts' GroupIds real groups.
    const groupIds = new Set(demo.groups.map((g) => g.Id));
    const contactIds = new Set(demo.contacts.map((c) => c.Id));
    assert.ok(demo.groups.length >= 2);
    for (const g of demo.groups) for (const id of g.PhoneNumberIds) assert.ok(contactIds.has(id));
    for (const c of demo.contacts) for (const id of c.GroupIds) assert.ok(groupIds.has(id));

    // Several custom fields with entries.
    const fieldIds = new Set(demo.customFields.map((f) => f.Id));
    assert.ok(demo.customFields.length >= 2, 'several custom fields');
    assert.ok(demo.customFieldEntries.length > 0);
    const fieldsWithEntries = new Set(demo.customFieldEntries.map((e) => e.CustomFieldId));
    assert.ok(fieldsWithEntries.size >= 2, 'several custom fields have entries');
    for (const e of demo.customFieldEntries) {
      assert.ok(fieldIds.has(e.CustomFieldId));
      assert.ok(contactIds.has(e.PhoneNumberId));
      const contact = demo.contacts.find((c) => c.Id === e.PhoneNumberId)!;
      assert.ok(contact.CustomFieldIds.includes(e.CustomFieldId), 'contact.CustomFieldIds lists the fields it has filled');
    }

    // Scheduled messages: SMS and MMS, made as sms/schedule makes them: Pending until the
    // scheduler's check (below, after the list is compared).
    for (const type of [1, 2])
      assert.ok(
        demo.scheduledMessages.some((m) => m.Type_Id === type),
        `a scheduled message of type ${type}`,
      );
    for (const m of demo.scheduledMessages) assert.deepEqual([m.Status_Id, m.Status_Description], [1, 'Pending']);
    for (const m of demo.scheduledMessages) {
      assert.match(m.DateTime, SCHEDULE_DATE_TIME);
      assert.equal(m.Type_Description, m.Type_Id === 1 ? 'SMS' : 'MMS');
      if (m.Type_Id === 1) assert.equal(m.MmsTemplateId, '');
      else assert.ok(Number.isInteger(m.MmsTemplateId));
    }

    // A second run creates a different account with its own token.
    const second = await runCli(['demo', '--json'], env);
    assert.equal(second.code, 0, second.stderr);
    const demo2 = parseDemo(second.stdout);
    assert.notEqual(demo2.account.id, demo.account.id);
    assert.notEqual(demo2.token, demo.token);
    assert.equal(demo2.contacts.length, demo.contacts.length);

    // Both tokens work, each seeing its own account (credits, and the numbers the demo printed).
    const ctx = await buildTestApp(t, {}, { dir });
    for (const d of [demo, demo2]) {
      const res = await ctx.app.inject({ url: withToken('/v1/numbers/index', d.token) });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(JSON.parse(res.body), d.numbers);
      const contact = d.contacts[0]!;
      const found = await ctx.app.inject({
        url: withToken('/v1/contacts/find', d.token, `number=${encodeURIComponent('+' + contact.Number)}`),
      });
      assert.equal(found.statusCode, 200);
      assert.deepEqual(JSON.parse(found.body), contact);
    }
    const res = await ctx.app.inject({ url: withToken('/v1/sms/single-schedule-messages', demo.token) });
    assert.deepEqual(JSON.parse(res.body), demo.scheduledMessages);
    // One check (a host's scheduler does it within a second): SMS and MMS, each Approved and Scheduled
    // and Action Required, none Pending.
    await testScheduler(ctx, createManualClock()).runOnce();
    const checked = JSON.parse(
      (await ctx.app.inject({ url: withToken('/v1/sms/single-schedule-messages', demo.token) })).body,
    ) as DemoAccount['scheduledMessages'];
    assert.equal(checked.length, demo.scheduledMessages.length);
    for (const type of [1, 2]) {
      for (const status of [2, 3]) {
        assert.ok(
          checked.some((m) => m.Type_Id === type && m.Status_Id === status),
          `a scheduled message of type ${type} in status ${status} after the check`,
        );
      }
    }
    assert.ok(!checked.some((m) => m.Status_Id === 1), 'none Pending after the check');
  });

  test('demo without --json prints the token and the curl lines (the 8 published operations, a send, a schedule, a sandbox STOP) for the given base URL', async (t) => {
    const { dbPath } = tempDir(t);
    const res = await runCli(['demo', '--base-url', 'http://example.test:9999'], { DATABASE_URL: dbPath, MSGSVC_DEMO: '0' });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /access token: [A-Za-z0-9_-]{32,}/);
    const curls = res.stdout.split('\n').filter((l) => l.startsWith('curl '));
    assert.equal(curls.length, 11);
    for (const line of curls) assert.ok(line.includes("'http://example.test:9999/v1/"), line);
    assert.ok(
      curls.some((l) => l.includes('/v1/sms/send?')),
      'a send',
    );
    assert.ok(
      curls.some((l) => l.includes('/v1/sms/schedule?') && l.includes('+1 min')),
      'a schedule a minute ahead',
    );
    assert.ok(
      curls.some((l) => l.includes('/v1/sandbox/inbound?') && l.includes('"Message":"STOP"')),
      'a sandbox STOP',
    );
  });
});

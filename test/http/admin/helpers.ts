/**
 * Shared pieces of the operator's suites (docs/API.md §16.4, /admin/v1): an operator key written
 * through the domain (as `msgsvc operators create` does), calls under /admin/v1, and the audit
 * entries of an account read straight from the database.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createOperatorKey } from '../../../src/domain/operators.ts';
import { systemClock, type Clock } from '../../../src/lib/time.ts';
import type { TestApp } from '../../helpers/app.ts';
import { call, type CallOptions } from '../../helpers/operations.ts';

export const ADMIN = '/admin/v1';

/** A new operator key: its id, name and secret. */
export async function operatorKey(
  ctx: TestApp,
  name = 'ops',
  clock: Clock = systemClock,
): Promise<{ id: number; name: string; secret: string }> {
  const { row, secret } = await createOperatorKey({ store: ctx.store, clock }, name);
  return { id: row.id, name: row.name, secret };
}

/** One call under /admin/v1 (`path` is relative: `/accounts/index`). */
export function admin(ctx: TestApp, o: CallOptions): Promise<LightMyRequestResponse> {
  return call(ctx.app, { ...o, path: `${ADMIN}${o.path}` });
}

/** One call that must succeed with `status`; returns its JSON. */
export async function adminOk<T>(ctx: TestApp, status: number, o: CallOptions): Promise<T> {
  const res = await admin(ctx, o);
  assert.equal(res.statusCode, status, `${o.method ?? 'GET'} ${o.path}: ${res.body}`);
  return (res.body === '' ? undefined : res.json()) as T;
}

/**
 * Retries `check` (an assertion) for up to 2 s: the entry of a refused write is written after its
 * response (as on /v1), so a read right after the response may come before it.
 */
export async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** An account's audit entries, oldest first, as stored. */
export async function auditRows(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => ({ actor: r.actor, operation: r.operation, objectId: r.object_id, status: Number(r.status) }));
}

/** The Account record of docs/API.md §16.4, fields in order. */
export interface AccountRec {
  Id: number;
  Name: string;
  Status: string;
  AvailableCredits: number;
  MaxPerSecond: number;
  MaxPerDay: number;
  DateCreated: string;
  DateUpdated: string;
  ParentId: number | null;
}

export const ACCOUNT_FIELDS = [
  'Id',
  'Name',
  'Status',
  'AvailableCredits',
  'MaxPerSecond',
  'MaxPerDay',
  'DateCreated',
  'DateUpdated',
  'ParentId',
];

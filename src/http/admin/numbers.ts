import { Type } from '@sinclair/typebox';
import { numberDigits, viewAccount } from '../../domain/account-admin.ts';
import {
  addServiceNumber,
  countServiceNumbers,
  deleteServiceNumber,
  findServiceNumber,
  listServiceNumbers,
  serviceNumberFilter,
  updateServiceNumber,
  type ServiceNumberDeps,
} from '../../domain/admin-numbers.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { canonicalInteger, toId } from '../../domain/validation.ts';
import { systemClock } from '../../lib/time.ts';
import type { OperationContext, RouteDeps } from '../operation.ts';
import { alsoAudit, defineAdminOperation, operatorWrite } from './operation.ts';
import {
  ServiceNumberBodySchema,
  ServiceNumberListQuery,
  ServiceNumberQuery,
  ServiceNumberRecordSchema,
  serviceNumberRecord,
} from './records.ts';

/**
 * `/admin/v1/numbers/…` (docs/API.md §16.4): the service's numbers and the account that holds
 * each, on the rules `msgsvc numbers add` uses too (src/domain/admin-numbers.ts). A number held by
 * several accounts (a shared short code) is one record per account. `?number=` names a number by
 * its digits; `AccountId` in the query says whose hold, and is required only when several accounts
 * hold it.
 */

function numberDeps({ store, config, clock }: RouteDeps): ServiceNumberDeps {
  return { store, clock: clock ?? systemClock, region: config.defaultRegion };
}

/** The hold `?number=` (and `AccountId`) names. @throws HttpError 400, NotFoundError, HttpStatusError 400. */
function holderOf(deps: RouteDeps, ctx: OperationContext) {
  return findServiceNumber(numberDeps(deps), ctx.param('number'), ctx.query('AccountId'));
}

/** `GET /admin/v1/numbers/index` (filters `AccountId`, `Number`): every account's numbers in the order they were added, paginated. */
export const adminNumbersIndex = defineAdminOperation({
  id: 'admin.numbers.index',
  path: '/admin/v1/numbers/index',
  methods: ['GET'],
  summary: "List the service's numbers and the account holding each",
  success: 200,
  schema: { query: ServiceNumberListQuery, response: Type.Array(ServiceNumberRecordSchema) },
  handler: (deps) => {
    const toRecord = serviceNumberRecord(deps.time);
    return async (ctx) => {
      const filter = serviceNumberFilter((name) => ctx.query(name), deps.config.defaultRegion);
      return ctx.paginate(
        await countServiceNumbers(deps, filter),
        (limit, offset) => listServiceNumbers(deps, filter, limit, offset),
        toRecord,
      );
    };
  },
});

/**
 * The account a numbers/create body names, when it exists: its log gets the entry, refusals
 * included. Undefined otherwise (the rules then answer `Account Id …`, and no log gets an entry).
 */
async function sentAccount(deps: RouteDeps, value: unknown): Promise<number | undefined> {
  const canonical = canonicalInteger(value);
  const id = canonical === null ? null : toId(canonical);
  if (id === null || id > 2_147_483_647) return undefined;
  try {
    return (await viewAccount(deps, undefined, String(id))).id;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * `POST /admin/v1/numbers/create` (`Number`, `AccountId`, `Status_Id`): the account now holds the
 * number; 201 with the record. No Location: a number is named by `?number=`, not by an id.
 */
export const adminNumbersCreate = defineAdminOperation({
  id: 'admin.numbers.create',
  path: '/admin/v1/numbers/create',
  methods: ['POST'],
  summary: 'Give an account a number',
  success: 201,
  schema: { body: ServiceNumberBodySchema, response: ServiceNumberRecordSchema },
  handler: (deps) => {
    const toRecord = serviceNumberRecord(deps.time);
    return async (ctx) => {
      const body = ctx.body();
      const digits = numberDigits(body.Number, deps.config.defaultRegion);
      const account = await sentAccount(deps, body.AccountId);
      return operatorWrite(deps, ctx, { ...(account !== undefined ? { account } : {}), objectId: digits ?? '' }, async (d) =>
        toRecord(await addServiceNumber(numberDeps(d), body)),
      );
    };
  },
});

/**
 * `PUT|PATCH /admin/v1/numbers/update?number=` (`AccountId` moves it to that account, `Status_Id`);
 * 200 with the record after the change.
 */
export const adminNumbersUpdate = defineAdminOperation({
  id: 'admin.numbers.update',
  path: '/admin/v1/numbers/update',
  methods: ['PUT', 'PATCH'],
  summary: "Change a number's status, or move it to another account",
  success: 200,
  schema: { query: ServiceNumberQuery, body: ServiceNumberBodySchema, response: ServiceNumberRecordSchema },
  handler: (deps) => {
    const toRecord = serviceNumberRecord(deps.time);
    return async (ctx) => {
      ctx.param('number');
      const body = ctx.body();
      const holder = await holderOf(deps, ctx);
      const row = await operatorWrite(deps, ctx, { account: holder.account_id, objectId: holder.number }, (d) =>
        updateServiceNumber(numberDeps(d), holder, body),
      );
      // A number moved is in the log of the account it left (above) and of the one it joined.
      if (row.account_id !== holder.account_id) await alsoAudit(deps.store, ctx, row.account_id);
      return toRecord(row);
    };
  },
});

/** `DELETE /admin/v1/numbers/delete?number=`: the account no longer holds the number (204); its keyword reservations on it go too. */
export const adminNumbersDelete = defineAdminOperation({
  id: 'admin.numbers.delete',
  path: '/admin/v1/numbers/delete',
  methods: ['DELETE'],
  summary: 'Take a number from an account',
  success: 204,
  schema: { query: ServiceNumberQuery },
  handler: (deps) => async (ctx) => {
    const holder = await holderOf(deps, ctx);
    await operatorWrite(deps, ctx, { account: holder.account_id, objectId: holder.number }, (d) => deleteServiceNumber(d, holder));
  },
});

export const adminNumbers = [adminNumbersIndex, adminNumbersCreate, adminNumbersUpdate, adminNumbersDelete];

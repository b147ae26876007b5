import { inTransaction } from '../store/db.ts';
import { lockBalances } from '../store/repositories/account-admin.ts';
import { changeCredits } from '../store/repositories/accounts.ts';
import { setKeyLabel } from '../store/repositories/admin-accounts.ts';
import { createAccountKey, viewAccount, type AccountAdminDeps, type AccountRecordRow } from './account-admin.ts';
import { ValidationFailedError } from './errors.ts';
import type { Principal } from './principal.ts';
import { messages } from './validation.ts';

/**
 * What the `msgsvc` commands need beyond the account rules of src/domain/account-admin.ts, built
 * on them so that the command line and the operator's API (docs/API.md §16.4) stay one set of
 * rules: a key with a label, and setting a balance outright.
 */

/** Who the command line acts as inside an account: the system, holding every scope. */
export const COMMAND_LINE: Principal = { accountId: 0, scopes: ['*'], actor: 'system' };

/**
 * `msgsvc tokens create`: a key of account `accountId` with every scope (createAccountKey, as the
 * operator's `accounts/keys`), named `name`, with the note `label`.
 * @returns the key's id and its secret, shown this once.
 * @throws NotFoundError no such account; ValidationFailedError `Name …`, `The account is closed.`
 */
export async function createLabelledKey(
  deps: AccountAdminDeps,
  accountId: number,
  name: string,
  label: string,
): Promise<{ id: number; secret: string }> {
  const { row, secret } = await createAccountKey(deps, undefined, COMMAND_LINE, String(accountId), { Name: name });
  if (label !== '') await setKeyLabel(deps.store.db, row.id, label);
  return { id: row.id, secret };
}

/**
 * `msgsvc credits set`: sets the balance to `balance` credits, with one `adjustment` entry of the
 * difference (none when it does not change), read and written in one transaction.
 * @returns the account after the change.
 * @throws NotFoundError no such account; ValidationFailedError `Amount is invalid.` (below zero, or
 *   not a safe integer).
 */
export async function setCredits(
  deps: Pick<AccountAdminDeps, 'store' | 'clock'>,
  accountId: number,
  balance: number,
  note: string,
): Promise<AccountRecordRow> {
  const account = await viewAccount(deps, undefined, String(accountId));
  if (!Number.isSafeInteger(balance) || balance < 0)
    throw new ValidationFailedError([{ field: 'Amount', message: messages.invalid('Amount') }]);
  const now = deps.clock.nowSeconds();
  return inTransaction(
    deps.store,
    async (tx) => {
      await lockBalances(tx, [account.id]);
      await changeCredits(tx, account.id, balance, 'set', now, { type: 'adjustment', note });
      return { ...account, available_credits: balance };
    },
    { immediate: true },
  );
}

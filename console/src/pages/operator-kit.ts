/**
 * What the operator's pages share (docs/API.md §16.4, `/admin/v1/…`): the records only the
 * operator sees, an account's status in the operator's words, and every account read once for the
 * choices that name one (which account a number goes to).
 */
import type { Api } from '../api.ts';
import type { Subaccount } from './subaccount-kit.ts';
import { useEveryPage } from './template-kit.tsx';

/** The operator's Account: the Sub-account record plus `ParentId` (null for a top-level account). */
export type Account = Subaccount & { ParentId?: number | null };

/** One account's hold on one number (admin numbers/index). */
export interface ServiceNumber {
  Number: string;
  AccountId: number;
  Status_Id: number;
  Status_Description: string;
  Blocked_Date: string | null;
  DateCreated: string;
}

/** A configured carrier, its state as the answering process sees it, and its last hour (admin carriers/index). */
export interface Carrier {
  Name: string;
  Type: string;
  State: string;
  InFlight: number | null;
  Submitted: number;
  Failed: number;
}

/** An account's status in words, for the operator (docs/API.md §16.2). */
export const ACCOUNT_STATUS_WORDS: Record<string, string> = {
  active: 'Active: it sends, and its keys and people work.',
  suspended:
    'Suspended: it can read but not change anything or send; its Queued messages wait, their credits still taken, and go out once it is resumed.',
  closed: 'Closed: its keys stopped and its people were signed out; its data is kept. It cannot be made active again.',
};

/** An account as a choice names it: `Acme (3)`. */
export function accountLabel(account: Account): string {
  return `${account.Name ?? ''} (${account.Id ?? ''})`;
}

/** Every account (accounts/index, 100 a page), read again when `deps` change; undefined while loading or unreadable. */
export function useAllAccounts(api: Api, deps: readonly unknown[] = []): { rows: Account[]; complete: boolean } | undefined {
  return useEveryPage<Account>(
    (page) => api.admin<Account[]>('GET', '/admin/v1/accounts/index', { query: { page: String(page), 'per-page': '100' } }),
    [api, ...deps],
  );
}

/**
 * What the sub-account pages share (subaccounts.tsx, subaccount-view.tsx; docs/API.md §16): the
 * record's type, its status and quotas in words, what the API's messages on its fields mean, the
 * account's own balance, and whether the signed-in credential reaches sub-accounts at all.
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import type { Api } from '../api.ts';
import type { FieldHelp } from './fields.tsx';

export type Subaccount = components['schemas']['Subaccount'];

/** The answer of the API to a sub-account's credential (docs/API.md §16.1): 403, whatever its scopes. */
const FORBIDDEN = 403;

/**
 * True when the signed-in credential may see sub-accounts: it holds `subaccounts:read` and the
 * server does not refuse it (a sub-account's keys and people hold `*` yet never reach
 * subaccounts/*: 403). Asked once per session (subaccounts/index, one Id); false until answered.
 */
export function useSubaccountsShown(api: Api | undefined): boolean {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    setShown(false);
    if (api === undefined || !api.can('subaccounts:read')) return;
    let live = true;
    api
      .GET('/v1/subaccounts/index', { params: { query: { 'per-page': '1', fields: 'Id' } } })
      .then(({ response }) => live && setShown(response.status !== FORBIDDEN))
      .catch(() => live && setShown(true));
    return () => {
      live = false;
    };
  }, [api]);
  return shown;
}

/** A sub-account's status in words: what it may do (docs/API.md §16.2). */
export const STATUS_WORDS: Record<string, string> = {
  active: 'Active: it sends, and its keys and people work.',
  suspended:
    'Suspended: it can read but not change anything or send (This account is suspended.); its Queued messages wait, their credits still taken, and go out once it is resumed.',
  closed: 'Closed: its keys stopped and its credits came back to this account; its data is kept. It cannot be made active again.',
};

/** A quota as people read it: 0 is no limit of its own. */
export function quotaText(value: number | undefined, unit: string): string {
  return value === undefined || value === 0 ? 'No limit' : `${value.toLocaleString('en')} ${unit}`;
}

/** What the API's messages on a sub-account's fields mean here (docs/API.md §16.1). */
export const SUBACCOUNT_HELP: FieldHelp = {
  Name: {
    'Name cannot be blank.': 'Give the sub-account a name, e.g. the customer it is for.',
    'Name should contain at most 255 characters.': 'A name has 1 to 255 characters.',
  },
  Credits: {
    'Credits must be an integer.': 'Write a whole number of credits, or leave it empty for none.',
    'Credits must be no less than 0.': 'Write 0 or more: credits can only be moved to the sub-account here.',
  },
  MaxPerSecond: {
    'Max Per Second must be an integer.': 'Write a whole number of messages a second, or 0 for no limit of its own.',
    'Max Per Second must be no less than 0.': 'Write 0 (no limit of its own) or more.',
    'Max Per Second must be no greater than 100,000.': 'At most 100,000 messages a second.',
  },
  MaxPerDay: {
    'Max Per Day must be an integer.': 'Write a whole number of messages a day, or 0 for no limit of its own.',
    'Max Per Day must be no less than 0.': 'Write 0 (no limit of its own) or more.',
  },
};

/** The value of a number field as the API takes it: the digits as typed (the API reads quoted integers), or left out when empty. */
export function typed(value: string): string | undefined {
  const text = value.trim();
  return text === '' ? undefined : text;
}

/** The signed-in account's own balance (credits/balance), read again when `tick` changes; undefined without `credits:read`. */
export function useBalance(api: Api, tick: unknown): number | undefined {
  const [balance, setBalance] = useState<number | undefined>();
  useEffect(() => {
    if (!api.can('credits:read')) return;
    let live = true;
    api
      .GET('/v1/credits/balance')
      .then(({ data }) => live && data?.AvailableCredits !== undefined && setBalance(data.AvailableCredits))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api, tick]);
  return balance;
}

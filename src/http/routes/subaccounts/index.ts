import { subaccountsCreate } from './create.ts';
import { subaccountsCredits } from './credits.ts';
import { subaccountsDelete } from './delete.ts';
import { subaccountsKeys } from './keys.ts';
import { subaccountsIndex } from './list.ts';
import { subaccountsNumbersAdd, subaccountsNumbersRemove } from './numbers.ts';
import { subaccountsUpdate } from './update.ts';
import { subaccountsUsage } from './usage.ts';
import { subaccountsUsers } from './users.ts';
import { subaccountsView } from './view.ts';

/**
 * `/v1/subaccounts/…` (docs/API.md §16, scope `subaccounts`): `index`, `view`, `create`, `update`,
 * `delete` (close), `credits`, `keys`, `users`, `numbers` (POST in, DELETE back) and `usage`. A
 * sub-account's own credentials never reach them (403).
 */
export const subaccounts = [
  subaccountsIndex,
  subaccountsView,
  subaccountsCreate,
  subaccountsUpdate,
  subaccountsDelete,
  subaccountsCredits,
  subaccountsKeys,
  subaccountsUsers,
  subaccountsNumbersAdd,
  subaccountsNumbersRemove,
  subaccountsUsage,
];

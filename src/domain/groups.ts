import { inTransaction, type Store } from '../store/db.ts';
import * as groups from '../store/repositories/groups.ts';
import { NotFoundError, ValidationFailedError } from './errors.ts';
import type { GroupRow } from './records.ts';
import { isEmpty, toId, validate, type Input, type Rule } from './validation.ts';
import { nowSeconds } from './time.ts';

/** Spec "PUT /v1/groups/update": fname required, fname and fnote 3 to 255 characters. */
const RULES: readonly Rule[] = [
  { field: 'fname', rule: 'required' },
  { field: 'fname', rule: 'string', min: 3, max: 255 },
  { field: 'fnote', rule: 'string', min: 3, max: 255 },
];

/**
 * Renames a group and, when `fnote` is given (not null or ""), changes its note.
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError when the account has no group `id` (checked before the body, CONVENTIONS §1).
 * @throws ValidationFailedError with the first error of each field.
 */
export async function updateGroup(store: Store, accountId: number, id: string, input: Input): Promise<GroupRow> {
  const groupId = toId(id);
  return inTransaction(store, async (tx) => {
    if (groupId === null || !(await groups.groupExists(tx, accountId, groupId))) throw new NotFoundError(id);
    const errors = validate(input, RULES);
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const note = isEmpty(input.fnote) ? undefined : (input.fnote as string);
    await groups.updateGroup(tx, accountId, groupId, input.fname as string, note, nowSeconds());
    return (await groups.findGroup(tx, accountId, groupId))!;
  });
}

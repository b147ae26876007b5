import { usersCreate } from './create.ts';
import { usersDelete } from './delete.ts';
import { usersIndex } from './list.ts';
import { usersReset } from './reset.ts';
import { usersUpdate } from './update.ts';
import { usersView } from './view.ts';

/**
 * `/v1/users/…` (docs/API.md §15.3, scope `users`): `index`, `view`, `create`, `update`,
 * `delete` and `reset?id=`. The replies to `create` and `reset` add the person's `InviteUrl`.
 */
export const users = [usersIndex, usersView, usersCreate, usersUpdate, usersDelete, usersReset];

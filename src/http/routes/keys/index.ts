import { keysCreate } from './create.ts';
import { keysDelete } from './delete.ts';
import { keysIndex } from './list.ts';
import { keysRoll } from './roll.ts';
import { keysUpdate } from './update.ts';
import { keysView } from './view.ts';

/**
 * `/v1/keys/…` (docs/API.md §15.2, scope `keys`): `index`, `view`, `create`, `update`, `delete`
 * and `roll?id=`. The replies to `create` and `roll` alone show the key's `Secret`.
 */
export const keys = [keysIndex, keysView, keysCreate, keysUpdate, keysDelete, keysRoll];

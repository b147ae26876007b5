import { groupsAddContacts } from './add-contacts.ts';
import { groupsCreate } from './create.ts';
import { groupsDelete } from './delete.ts';
import { groupsIndex } from './list.ts';
import { groupsRemoveContacts } from './remove-contacts.ts';
import { groupsUpdate } from './update.ts';
import { groupsView } from './view.ts';

/** `/v1/groups/…`: contact groups (API.md §10.3). */
export const groups = [groupsIndex, groupsView, groupsCreate, groupsUpdate, groupsDelete, groupsAddContacts, groupsRemoveContacts];

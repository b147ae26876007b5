import { keywordCheck } from './check.ts';
import { keywordDelete } from './delete.ts';
import { keywordIndex } from './list.ts';
import { keywordReserve } from './reserve.ts';
import { keywordUpdate } from './update.ts';
import { keywordView } from './view.ts';

/** `/v1/keyword/…`: keyword reservations (API.md §10.5). */
export const keyword = [keywordReserve, keywordIndex, keywordView, keywordUpdate, keywordDelete, keywordCheck];

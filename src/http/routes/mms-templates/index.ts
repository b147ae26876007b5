import { mmsTemplatesCreate } from './create.ts';
import { mmsTemplatesDelete } from './delete.ts';
import { mmsTemplatesIndex } from './list.ts';
import { mmsTemplatesUpdate } from './update.ts';
import { mmsTemplatesView } from './view.ts';

/** `/v1/mms-templates/…`: MMS templates (API.md §10.7). */
export const mmsTemplates = [mmsTemplatesIndex, mmsTemplatesView, mmsTemplatesCreate, mmsTemplatesUpdate, mmsTemplatesDelete];

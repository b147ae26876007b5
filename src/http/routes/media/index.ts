import { mediaDelete } from './delete.ts';
import { mediaDownload } from './download.ts';
import { mediaIndex } from './list.ts';
import { mediaUpload } from './upload.ts';
import { mediaView } from './view.ts';

/** `/v1/media/…`: MMS media (API.md §10.7). */
export const media = [mediaIndex, mediaView, mediaUpload, mediaDownload, mediaDelete];

import { mediaDelete, mediaIndex, mediaView } from './crud.ts';
import { mediaDownload } from './download.ts';
import { mediaUpload } from './upload.ts';

/** `/v1/media/…`: MMS media (API-EXTENSIONS §9). */
export const media = [mediaIndex, mediaView, mediaUpload, mediaDownload, mediaDelete];

import { webhooksCreate } from './create.ts';
import { webhooksDelete } from './delete.ts';
import { webhooksDeliveries } from './deliveries.ts';
import { webhooksIndex } from './list.ts';
import { webhooksRedeliver } from './redeliver.ts';
import { webhooksUpdate } from './update.ts';
import { webhooksView } from './view.ts';

/**
 * `/v1/webhooks/…` (API.md §12): `index`, `view`, `create`, `update`, `delete`,
 * `deliveries?id=` (a webhook's deliveries, newest first, paginated) and `redeliver?id=` (POST,
 * a delivery's id: queued once more; 200 with the delivery record). POSTs honour Idempotency-Key
 * (API.md §7); the create reply alone carries `Secret`, so only its replay shows it again.
 */
export const webhooks = [
  webhooksIndex,
  webhooksView,
  webhooksCreate,
  webhooksUpdate,
  webhooksDelete,
  webhooksDeliveries,
  webhooksRedeliver,
];

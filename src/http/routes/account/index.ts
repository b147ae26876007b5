import { accountSettings } from './settings.ts';
import { accountUpdateSettings } from './update-settings.ts';

/**
 * `/v1/account/…` (API.md §14.3.4): `settings`, one address with two operations: the read (GET,
 * HEAD) and the change of the fields sent (PUT, PATCH). Any other method is 405 with `Allow: GET,
 * HEAD, PUT, PATCH`.
 */
export const account = [accountSettings, accountUpdateSettings];

import { numbersIndex } from './list.ts';
import { numbersUpdate } from './update.ts';
import { numbersUsage } from './usage.ts';
import { numbersView } from './view.ts';

/** `/v1/numbers/…`: the account's numbers, one number's limits (API.md §17) and their use. */
export const numbers = [numbersIndex, numbersView, numbersUpdate, numbersUsage];

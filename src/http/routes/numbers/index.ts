import { numbersIndex } from './list.ts';

/** `/v1/numbers/…`: the account's numbers. */
export const numbers = [numbersIndex];

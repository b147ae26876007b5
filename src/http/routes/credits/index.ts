import { creditsBalance } from './balance.ts';

/** `/v1/credits/…`: the credit balance. */
export const credits = [creditsBalance];

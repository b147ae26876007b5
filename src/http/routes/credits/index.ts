import { creditsBalance } from './balance.ts';
import { creditsLedger } from './ledger.ts';

/** `/v1/credits/…`: the credit balance and its ledger. */
export const credits = [creditsBalance, creditsLedger];

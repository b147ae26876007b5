import { type Static, Type } from '@sinclair/typebox';
import { Int } from './common.ts';

/** API.md §9.3. */
export const CreditBalanceRecordSchema = Type.Object({ AvailableCredits: Int() });
export type CreditBalanceRecord = Static<typeof CreditBalanceRecordSchema>;

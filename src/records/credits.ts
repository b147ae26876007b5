import { type Static, Type } from '@sinclair/typebox';
import { Int } from './common.ts';

/** Spec "Credit balance". */
export const CreditBalanceRecordSchema = Type.Object({ AvailableCredits: Int() });
export type CreditBalanceRecord = Static<typeof CreditBalanceRecordSchema>;

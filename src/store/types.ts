import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables.ts';

/** A database handle or an open transaction: repositories accept either, so the caller owns the transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

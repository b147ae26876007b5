/**
 * The account the sending benches start from (bench/dispatch.ts, bench/carriers.ts,
 * bench/quiet-hours.ts): one account with an Active number, its credits, and contacts (none opted
 * out) all in one group, written in a few set-based statements so that a million contacts take
 * seconds.
 */
import { sql } from 'kysely';
import { inTransaction, type Store } from '../../src/store/db.ts';
import * as accounts from '../../src/store/repositories/accounts.ts';
import { insertGroup } from '../../src/store/repositories/groups.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { issueToken } from '../../src/domain/accounts.ts';

/** A run of contact numbers (E.164 digits without `+`): `prefix` then first, first + 1, … as decimal text, `count` of them. */
export interface NumberRange {
  prefix: string;
  first: number;
  count: number;
}

/**
 * Creates the account, its Active `number`, exactly `credits` credits, a group "Everyone" and one
 * contact per number of `ranges` in it; then a token, and ANALYZE on PostgreSQL (fresh statistics
 * for the planner, as `msgsvc generate` leaves them).
 */
export async function seedGroupAccount(
  store: Store,
  options: { name: string; number: string; credits: number; ranges: readonly NumberRange[] },
): Promise<{ accountId: number; token: string; groupId: number }> {
  const now = Math.floor(Date.now() / 1000);
  const { accountId, groupId } = await inTransaction(store, async (tx) => {
    const accountId = await accounts.createAccount(tx, options.name, now);
    await accounts.changeCredits(tx, accountId, options.credits, 'set', now);
    await insertNumber(tx, accountId, options.number, 0, null, now);
    const groupId = await insertGroup(tx, accountId, { name: 'Everyone', note: '', keywordId: 0, parentId: 0 }, now);
    for (const { prefix, first, count } of options.ranges) {
      const numbers =
        store.dialect === 'postgres'
          ? sql`select ${prefix} || cast(${first} + i as text) as d from generate_series(0, ${count - 1}) as s(i)`
          : sql`select ${prefix} || cast(${first} + i as text) as d from (with recursive s(i) as (select 0 union all select i + 1 from s where i < ${count - 1}) select i from s)`;
      await sql`insert into contacts (account_id, number, number_e164, opted_out, first_name, last_name, birthday, email, zip, city, created_at, updated_at)
        select ${accountId}, d, '+' || d, 0, 'Bench', '', null, '', '', '', ${now}, ${now} from (${numbers}) as n`.execute(tx);
    }
    await sql`insert into group_members (account_id, group_id, contact_id) select ${accountId}, ${groupId}, id from contacts where account_id = ${accountId}`.execute(
      tx,
    );
    return { accountId, groupId };
  });
  const { token } = await issueToken(store, accountId, 'bench');
  if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
  return { accountId, token, groupId };
}

import { generateToken } from '../../src/domain/accounts.ts';
import { hashToken } from '../../src/domain/tokens.ts';
import type { TestApp } from './app.ts';

/**
 * A key of account `accountId` holding exactly `scopes` (docs/API.md §15.1), written straight into
 * the store: its secret, for `access_token`.
 */
export async function keyWith(ctx: TestApp, accountId: number, scopes: readonly string[]): Promise<string> {
  const secret = generateToken();
  const now = Math.floor(Date.now() / 1000);
  await ctx.store.db
    .insertInto('api_tokens')
    .values({
      account_id: accountId,
      token_hash: hashToken(secret),
      label: '',
      name: 'scoped',
      prefix: secret.slice(0, 8),
      scopes: JSON.stringify(scopes),
      created_at: now,
      updated_at: now,
    })
    .execute();
  return secret;
}

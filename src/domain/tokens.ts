import { hash } from 'node:crypto';

/** SHA-256 of an access token, lowercase hex: the only form a token is stored in (CONVENTIONS §9). */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

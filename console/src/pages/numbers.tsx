import type { Api } from '../api.ts';

/** The account's numbers and their statuses (numbers/index). */
export function Numbers(_props: { api: Api }) {
  return <h1>Numbers</h1>;
}

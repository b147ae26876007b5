import type { Api } from '../api.ts';

/** The account's custom contact fields (custom-contact-fields/…). */
export function CustomFields(_props: { api: Api }) {
  return <h1>Custom fields</h1>;
}

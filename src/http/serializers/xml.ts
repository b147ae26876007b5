/**
 * The XML layout of API.md §2.3 (Yii2's XmlResponseFormatter): the declaration line, then the
 * document on one line under `<response>`, then a newline. A list becomes `<item>` children; a
 * record's fields become elements; null and "" are `<X></X>`; an empty array is `<X/>`.
 */

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

// Characters that XML 1.0 forbids: C0 controls other than tab, LF and CR, lone surrogates, U+FFFE/U+FFFF.
const INVALID_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPED = /[&<>\r]/g;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };

/**
 * Escapes `&`, `<`, `>`, writes a carriage return as `&#13;` (API.md §2.3) and drops
 * characters XML 1.0 cannot carry.
 */
export function escapeXmlText(text: string): string {
  return text.replace(INVALID_XML, '').replace(ESCAPED, (c) => ENTITIES[c]!);
}

/** What a JSON-shaped payload holds that is no object or array. */
type Scalar = string | number | bigint | boolean | null | undefined;

function scalar(value: Scalar): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return escapeXmlText(String(value));
}

function children(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value) out += element('item', item);
    return out;
  }
  let out = '';
  for (const key of Object.keys(value as object)) out += element(key, (value as Record<string, unknown>)[key]);
  return out;
}

function element(name: string, value: unknown): string {
  if (value !== null && typeof value === 'object') {
    const inner = children(value);
    return inner === '' ? `<${name}/>` : `<${name}>${inner}</${name}>`;
  }
  return `<${name}>${scalar(value as Scalar)}</${name}>`;
}

/** Renders a record, a list of records or an error body as a whole XML document. */
export function toXmlDocument(payload: unknown): string {
  return `${DECLARATION}${element('response', payload)}\n`;
}

/**
 * The XML serialiser (docs/API.md §2.3): `toXmlDocument` writes every XML answer.
 *
 * Oracle: no throw; the document is well-formed XML 1.0, and it parses back to its input: each
 * record's fields in order as elements, a list as `<item>`s, null and "" as empty elements, `true`
 * and `false` as text, numbers as their decimal text, and every string character for character
 * except those XML 1.0 cannot carry (C0 controls but tab, LF and CR; lone surrogates; U+FFFE,
 * U+FFFF), which are dropped. A carriage return survives (written `&#13;`). Element names are our
 * records' field names, never input, so the grammar generates only such names.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { toXmlDocument } from '../../src/http/serializers/xml.ts';
import { check, type FuzzTarget, type FuzzValue } from '../target.ts';

const name = fc.constantFrom('Number', 'Status_Id', 'Message', 'CustomFields', 'Errors', 'Field', 'item', 'X', 'a_b', 'response');
const text = fc.oneof(
  fc.string({ maxLength: 12, unit: 'binary' }),
  fc.constantFrom(
    '&',
    '<',
    '>',
    '&amp;',
    ']]>',
    '\r\n',
    '\r',
    '\u0000',
    '\ud800',
    '\udc00x',
    '\ud83d\ude00',
    '\ufffe',
    ' lead',
    'trail ',
    '<!--',
    '"\'',
  ),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    tie('list'),
    tie('record'),
  ),
  list: fc.array(tie('tree'), { maxLength: 4 }),
  record: fc.dictionary(name, tie('tree'), { maxKeys: 4 }),
}));

const INVALID =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const parser = new XMLParser({
  preserveOrder: true,
  trimValues: false,
  parseTagValue: false,
  ignoreAttributes: true,
  processEntities: true,
  htmlEntities: true,
});

/** What the document of `value` under element `tag` must parse back to (fast-xml-parser's ordered form). */
function expected(tag: string, value: FuzzValue): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const entries = Array.isArray(value) ? (value as FuzzValue[]).map((v) => ['item', v] as const) : Object.entries(value);
    return { [tag]: entries.map(([k, v]) => expected(k, v)) };
  }
  const s = value === null ? '' : typeof value === 'boolean' ? String(value) : String(value).replace(INVALID, '');
  return { [tag]: s === '' ? [] : [{ '#text': s }] };
}
/** Joins adjacent text nodes (the parser splits text at entities). */
function normalise(nodes: unknown): unknown {
  if (!Array.isArray(nodes)) return nodes;
  const out: unknown[] = [];
  for (const n of nodes as Record<string, unknown>[]) {
    const last = out[out.length - 1] as Record<string, unknown> | undefined;
    if ('#text' in n && last && '#text' in last) last['#text'] = String(last['#text']) + String(n['#text']);
    else if ('#text' in n) out.push({ ...n });
    else out.push(Object.fromEntries(Object.entries(n).map(([k, v]) => [k, normalise(v)])));
  }
  return out;
}

export const target: FuzzTarget<FuzzValue> = {
  name: 'xml',
  oracle:
    'no throw; well-formed XML 1.0 that parses back to the input (lists as <item>, null/"" empty, characters XML cannot carry dropped)',
  files: ['src/http/serializers/xml.ts'],
  arbitrary: tree as fc.Arbitrary<FuzzValue>,
  dictionary: ['&', '<', '>', '\r', '\u0000', '\ud800', ']]>', '&#13;'],
  run(payload) {
    if (payload instanceof Uint8Array) return;
    const doc = toXmlDocument(payload);
    check(doc.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n') && doc.endsWith('\n'), 'no declaration or final newline');
    const valid = XMLValidator.validate(doc);
    check(valid === true, `not well-formed: ${JSON.stringify(valid)} in ${JSON.stringify(doc)}`);
    const parsed = normalise((parser.parse(doc) as unknown[]).filter((n) => !('?xml' in (n as object))));
    const want = normalise([expected('response', payload)]);
    check(isDeepStrictEqual(parsed, want), `round trip differs:\n${JSON.stringify(parsed)}\n${JSON.stringify(want)}`);
  },
};

/**
 * Merge fields (docs/API.md §14.3.1): `parseMerge` reads a message text once, `renderMerge` fills it
 * in per recipient, as sms/send, send-group and preview do (src/domain/personalise.ts).
 *
 * Oracle: no throw; a text without braces is its own `plain` and has no fields; and merge fields
 * never expand inside an expansion: rendering with values that are themselves merge syntax gives
 * exactly the rendering with neutral placeholders, each placeholder then replaced by its value
 * (a value is copied as it is, never read again as a template); and no contact at all renders
 * every field empty.
 */
import fc from 'fast-check';
import { parseMerge, renderMerge, type ContactField, type MergeValues } from '../../src/domain/merge-fields.ts';
import { check, type FuzzTarget } from '../target.ts';

const FIELDS: readonly ContactField[] = ['FirstName', 'LastName', 'Number', 'City', 'Zip', 'Email'];
const piece = fc.oneof(
  fc.constantFrom(
    ...FIELDS.map((f) => `{${f}}`),
    '{Field:Colour}',
    '{Field: colour }',
    '{Field:}',
    '{Field:a{b}',
    '{{',
    '}}',
    '{',
    '}',
    '{firstname}',
    '{Field:Size}',
  ),
  fc.string({ maxLength: 8 }),
  fc.constantFrom('Hi ', ' ', '\u20ac', '\ud83d\ude00', '\u0000'),
);
type Input = { text: string; value: string };

export const target: FuzzTarget<Input> = {
  name: 'merge-fields',
  oracle:
    'no throw; brace-free text is plain; a value is inserted verbatim, never expanded again (placeholder equivalence); no contact renders fields empty',
  files: ['src/domain/merge-fields.ts'],
  arbitrary: fc.record({
    text: fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
    value: fc.oneof(fc.constantFrom('{FirstName}', '{Field:Colour}', '{{', '}}{', '$&', '$1'), fc.string({ maxLength: 6 })),
  }),
  dictionary: ['{FirstName}', '{LastName}', '{Number}', '{City}', '{Zip}', '{Email}', '{Field:', '}', '{', '{{', '}}'],
  run({ text, value }) {
    const t = parseMerge(text);
    if (!/[{}]/.test(text)) {
      check(!t.hasFields && t.plain === text, 'a text without braces changed');
    }
    // Placeholders: private-use characters the text cannot hold (checked), one per field.
    if (/[\ue000-\ue0ff]/.test(text)) return;
    const holders = new Map<string, string>();
    const values = (fill: (name: string) => string): MergeValues => {
      const contact = Object.fromEntries(FIELDS.map((f) => [f, fill(f)])) as Record<ContactField, string>;
      return { contact, entries: new Map(t.customKeys.map((k) => [k, fill(`custom:${k}`)])) };
    };
    const withValue = renderMerge(
      t,
      values((name) => `${value}${name.length % 3}`),
    );
    const withHolders = renderMerge(
      t,
      values((name) => {
        const h = String.fromCharCode(0xe000 + holders.size);
        holders.set(h, `${value}${name.length % 3}`);
        return h;
      }),
    );
    let expected = withHolders;
    for (const [h, v] of holders) expected = expected.split(h).join(v);
    check(withValue === expected, `a value was read as a template: ${JSON.stringify({ text, value })}`);
    check(!t.hasFields || t.parts.some((p) => typeof p !== 'string'), 'hasFields without a field part');
    // No contact at all (a number that is no contact's) renders every field empty.
    const empty: MergeValues = {
      contact: Object.fromEntries(FIELDS.map((f) => [f, ''])) as Record<ContactField, string>,
      entries: new Map(),
    };
    check(renderMerge(t, undefined) === renderMerge(t, empty), 'no contact is not the same as empty fields');
  },
};

/**
 * The merge grammar, the URL rules and the link codes of src/domain/personalise.ts (API.md §10.6
 * "Merge fields", "Tracked links"), with no database: `{{`/`}}` read left to right before merge
 * fields, every field name, `{Field:Name}` case-insensitive, anything else as it is; where a URL
 * ends; one code per distinct URL; the code alphabet and its spread; `ShortenLinks` values; and
 * MSGSVC_LINK_DOMAIN read at start. A property test checks parse+render against an independent
 * oracle built from tokens.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../src/config.ts';
import {
  contactValues,
  findUrls,
  finishText,
  newLinkCode,
  parseMerge,
  readShortenLinks,
  renderMerge,
  shortenUrls,
  type MergeValues,
} from '../../src/domain/personalise.ts';
import { messageCost } from '../../src/domain/segments.ts';

const OLIVIA: MergeValues = contactValues(
  { id: 1, number: '15552000000', first_name: 'Olivia', last_name: 'Smith', city: 'Austin', zip: '78701', email: 'o@example.com' },
  new Map([
    ['favorite color', 'Blue'],
    ['tier', 'Gold'],
  ]),
);
const merge = (text: string, values: MergeValues | undefined = OLIVIA) => renderMerge(parseMerge(text), values);

test('merge fields: every contact field, {Field:Name}, and empty values for a recipient who is no contact', () => {
  assert.equal(merge('{FirstName} {LastName} {Number} {City} {Zip} {Email}'), 'Olivia Smith 15552000000 Austin 78701 o@example.com');
  assert.equal(merge('Color: {Field:Favorite Color}, tier {Field:Tier}'), 'Color: Blue, tier Gold');
  assert.equal(
    merge('{Field:FAVORITE COLOR}|{Field: favorite color }'),
    'Blue|Blue',
    'custom field names compare as names do (case, trim)',
  );
  assert.equal(merge('[{Field:No Such Field}]'), '[]', 'a field the account does not have is empty');
  assert.equal(renderMerge(parseMerge('Hi {FirstName} {Field:Tier}!'), undefined), 'Hi  !', 'no contact: every field empty');
  const blank = contactValues({ id: 2, number: '1', first_name: '', last_name: '', city: '', zip: '', email: '' });
  assert.equal(merge('[{FirstName}][{Field:Tier}]', blank), '[][]', 'a contact without the value: empty');
});

test('merge grammar: {{ and }} read left to right before fields; anything else is sent as it is', () => {
  const cases: [string, string][] = [
    ['{{FirstName}}', '{FirstName}'],
    ['{{{FirstName}}}', '{Olivia}'],
    ['{{{{FirstName}}}}', '{{FirstName}}'],
    ['{{}}', '{}'],
    ['{{', '{'],
    ['}}', '}'],
    ['a {Foo} b', 'a {Foo} b'],
    ['{firstname} {FIRSTNAME}', '{firstname} {FIRSTNAME}'],
    ['{ FirstName}', '{ FirstName}'],
    ['{Field:}', '{Field:}'],
    ['{field:Tier}', '{field:Tier}'],
    ['unclosed {FirstName', 'unclosed {FirstName'],
    ['{', '{'],
    ['}', '}'],
    ['x}y{z', 'x}y{z'],
    ['{Foo}}', '{Foo}'],
    ['{{Foo}', '{Foo}'],
    ['{FirstName}}}', 'Olivia}'],
    ['{{{Foo}', '{{Foo}'],
    ['{Field:Ti{er}', '{Field:Ti{er}'],
    ['{Field:Tier}}', 'Gold'.concat('}')],
    ['{FirstName}{LastName}', 'OliviaSmith'],
    ['', ''],
    ['no fields at all', 'no fields at all'],
  ];
  for (const [input, expected] of cases) assert.equal(merge(input), expected, JSON.stringify(input));
});

test('parseMerge: hasFields, the custom names used once each, and the plain text for everyone', () => {
  const t = parseMerge('{{x}} {Field:A b} {Field:a B} {FirstName}');
  assert.equal(t.hasFields, true);
  assert.deepEqual(t.customKeys, ['a b']);
  const plain = parseMerge('{{x}} {Foo} }} €');
  assert.equal(plain.hasFields, false);
  assert.equal(plain.plain, '{x} {Foo} } €');
  assert.equal(renderMerge(plain, OLIVIA), plain.plain);
  assert.equal(renderMerge(plain, undefined), plain.plain);
});

test('merged values are not read again (a value holding {FirstName} or {{ stays as it is)', () => {
  const tricky = contactValues({ id: 3, number: '1', first_name: '{LastName}', last_name: '{{x}}', city: '', zip: '', email: '' });
  assert.equal(merge('{FirstName}/{LastName}', tricky), '{LastName}/{{x}}');
});

// ------------------------------------------------------------------ oracle property

type Token =
  | { k: 'lit'; s: string }
  | { k: 'open' }
  | { k: 'close' }
  | { k: 'field'; f: 'FirstName' | 'LastName' | 'Number' | 'City' | 'Zip' | 'Email' }
  | { k: 'custom'; name: string }
  | { k: 'unknown'; word: string };

const BRACELESS = fc.string({ unit: fc.constantFrom(...'ab Z09.,!^\\[~]|€\n'.split(''), 'é', 'ß', 'Ω', '中', '😀'), maxLength: 8 });
const TOKEN: fc.Arbitrary<Token> = fc.oneof(
  BRACELESS.map((s) => ({ k: 'lit' as const, s })),
  fc.constant({ k: 'open' as const }),
  fc.constant({ k: 'close' as const }),
  fc.constantFrom('FirstName', 'LastName', 'Number', 'City', 'Zip', 'Email').map((f) => ({ k: 'field' as const, f })),
  fc.constantFrom('Tier', 'tier', 'Favorite Color', 'Missing').map((name) => ({ k: 'custom' as const, name })),
  fc.constantFrom('Foo', 'firstName', 'Field', 'x y', '').map((word) => ({ k: 'unknown' as const, word })),
);

/** The text written and the text expected, built token by token (no parsing). */
function oracle(tokens: Token[], values: MergeValues): { text: string; expected: string } {
  let text = '';
  let expected = '';
  for (const t of tokens) {
    if (t.k === 'lit') [text, expected] = [text + t.s, expected + t.s];
    else if (t.k === 'open') [text, expected] = [text + '{{', expected + '{'];
    else if (t.k === 'close') [text, expected] = [text + '}}', expected + '}'];
    else if (t.k === 'field') [text, expected] = [text + `{${t.f}}`, expected + (values.contact?.[t.f] ?? '')];
    else if (t.k === 'custom') [text, expected] = [text + `{Field:${t.name}}`, expected + (values.entries.get(t.name.toLowerCase()) ?? '')];
    else [text, expected] = [text + `{${t.word}}`, expected + `{${t.word}}`];
  }
  return { text, expected };
}

test('property: parse + render equal a token-by-token oracle, and the cost is messageCost of the oracle text', () => {
  const value = fc.string({ unit: fc.constantFrom(...'aZ {}^€😀é'.split(''), '😀'), maxLength: 6 });
  fc.assert(
    fc.property(fc.array(TOKEN, { maxLength: 30 }), value, value, value, (tokens, first, last, tier) => {
      const values = contactValues(
        { id: 1, number: '447700900123', first_name: first, last_name: last, city: 'Paris', zip: '75001', email: 'e@x.io' },
        new Map([['tier', tier]]),
      );
      const { text, expected } = oracle(tokens, values);
      assert.equal(merge(text, values), expected);
      const prices = { smsSegmentCredits: 2, mmsCredits: 5 };
      const p = finishText(merge(text, values), 1, { prices, linkDomain: undefined }, false);
      const cost = messageCost(1, expected, prices);
      assert.deepEqual([p.message, p.encoding, p.segments, p.credits], [expected, cost.encoding, cost.segments, cost.credits]);
    }),
    { numRuns: 500 },
  );
});

// ------------------------------------------------------------------ URLs

test('URLs: where one starts and ends (whitespace, <>", trailing punctuation, unbalanced closing brackets)', () => {
  const urls = (s: string) => findUrls(s).map((u) => u.url);
  assert.deepEqual(urls('see https://x.io/a.'), ['https://x.io/a']);
  assert.deepEqual(urls('a http://x.io, b https://y.io/p?q=1&r=2; c'), ['http://x.io', 'https://y.io/p?q=1&r=2']);
  assert.deepEqual(urls('(see https://x.io/a)'), ['https://x.io/a']);
  assert.deepEqual(urls('https://en.wikipedia.org/wiki/A_(b)'), ['https://en.wikipedia.org/wiki/A_(b)']);
  assert.deepEqual(urls('(https://en.wikipedia.org/wiki/A_(b))'), ['https://en.wikipedia.org/wiki/A_(b)']);
  assert.deepEqual(urls('[https://x.io/a]'), ['https://x.io/a']);
  assert.deepEqual(urls('{https://x.io/a}'), ['https://x.io/a']);
  assert.deepEqual(urls('Go!https://x.io/a?!'), ['https://x.io/a']);
  assert.deepEqual(urls('"https://x.io/a"'), ['https://x.io/a']);
  assert.deepEqual(urls("'https://x.io/a'"), ['https://x.io/a']);
  assert.deepEqual(urls('<https://x.io/a>'), ['https://x.io/a']);
  assert.deepEqual(urls('https://x.io/a\nhttps://x.io/b\thttps://x.io/c'), ['https://x.io/a', 'https://x.io/b', 'https://x.io/c']);
  assert.deepEqual(urls('HTTPS://X.IO/A Http://y.io'), ['HTTPS://X.IO/A', 'Http://y.io'], 'the scheme in any case');
  assert.deepEqual(urls('https://x.io/#frag:x'), ['https://x.io/#frag:x'], 'inner punctuation stays');
  assert.deepEqual(urls('https://x.io/ü/😀'), ['https://x.io/ü/😀'], 'any non-space character');
  assert.deepEqual(urls('https:// nothing, https://. and http://'), [], 'nothing after :// is no URL');
  assert.deepEqual(urls('xhttps://x.io ftp://x.io mailto:a@b.c www.x.io'), [], 'only http(s) after a non-letter');
  assert.deepEqual(urls('1https://x.io'), []);
  const spans = findUrls('a https://x.io/b. c');
  assert.deepEqual(spans, [{ start: 2, end: 16, url: 'https://x.io/b' }]);
});

test('shortenUrls: each URL replaced by {domain}/l/{code}; one code per distinct URL; the rest of the text kept', () => {
  let n = 0;
  const codes = ['AAAAAAA', 'BBBBBBB', 'CCCCCCC'];
  const next = () => codes[n++]!;
  const r = shortenUrls('A https://x.io/1, then https://x.io/2 and again https://x.io/1.', 'https://go.ex', next);
  assert.equal(r.message, 'A https://go.ex/l/AAAAAAA, then https://go.ex/l/BBBBBBB and again https://go.ex/l/AAAAAAA.');
  assert.deepEqual(r.links, [
    { code: 'AAAAAAA', url: 'https://x.io/1' },
    { code: 'BBBBBBB', url: 'https://x.io/2' },
  ]);
  assert.deepEqual(shortenUrls('no link here', 'https://go.ex'), { message: 'no link here', links: [] });
  const real = shortenUrls('https://a.io https://b.io https://a.io', 'https://go.ex/p');
  assert.equal(real.links.length, 2);
  assert.match(
    real.message,
    /^https:\/\/go\.ex\/p\/l\/[A-Za-z0-9_-]{7} https:\/\/go\.ex\/p\/l\/[A-Za-z0-9_-]{7} https:\/\/go\.ex\/p\/l\/[A-Za-z0-9_-]{7}$/,
  );
  assert.notEqual(real.links[0]!.code, real.links[1]!.code);
});

test('finishText: segments and credits are counted on the shortened text; ShortenLinks without a domain leaves links', () => {
  const prices = { smsSegmentCredits: 1, mmsCredits: 3 };
  const long = `${'x'.repeat(150)} https://example.com/${'p'.repeat(40)}`;
  const plain = finishText(long, 1, { prices, linkDomain: undefined }, true);
  assert.equal(plain.message, long);
  assert.equal(plain.segments, 2);
  const short = finishText(long, 1, { prices, linkDomain: 'https://g.co' }, true);
  assert.equal(short.message.length, 150 + 1 + 'https://g.co/l/'.length + 7);
  assert.equal(short.segments, 2, '173 characters: still two');
  const fits = finishText(`${'x'.repeat(130)} https://example.com/${'p'.repeat(40)}`, 1, { prices, linkDomain: 'https://g.co' }, true);
  assert.equal(fits.segments, 1, '153 characters once shortened: one segment');
  const mms = finishText('https://x.io', 2, { prices, linkDomain: 'https://g.co' }, false);
  assert.deepEqual([mms.encoding, mms.segments, mms.credits], [undefined, 1, 3]);
});

test('link codes: 7 characters of A-Z a-z 0-9 - _, every symbol used, no two alike in 20,000', () => {
  const seen = new Set<string>();
  const symbols = new Map<string, number>();
  for (let i = 0; i < 20_000; i++) {
    const c = newLinkCode();
    assert.match(c, /^[A-Za-z0-9_-]{7}$/);
    seen.add(c);
    for (const ch of c) symbols.set(ch, (symbols.get(ch) ?? 0) + 1);
  }
  assert.equal(seen.size, 20_000);
  assert.equal(symbols.size, 64, 'all 64 symbols appear');
  // 140,000 symbols over 64: about 2,187 each; a modulo bias or a stuck bit would show far outside this.
  for (const [ch, k] of symbols) assert.ok(k > 1900 && k < 2500, `symbol ${ch}: ${k}`);
});

// ------------------------------------------------------------------ ShortenLinks and MSGSVC_LINK_DOMAIN

test('readShortenLinks: 0 or 1 (default 0, empty 0); other integers invalid; non-integers; 1 without a link domain', () => {
  const d = 'https://go.ex';
  assert.deepEqual(readShortenLinks({}, d), { value: false });
  assert.deepEqual(readShortenLinks({ ShortenLinks: '' }, d), { value: false });
  assert.deepEqual(readShortenLinks({ ShortenLinks: null }, d), { value: false });
  assert.deepEqual(readShortenLinks({ ShortenLinks: 0 }, d), { value: false });
  assert.deepEqual(readShortenLinks({ ShortenLinks: '1' }, d), { value: true });
  assert.deepEqual(readShortenLinks({ ShortenLinks: 1 }, d), { value: true });
  const invalid = { error: { field: 'ShortenLinks', message: 'Shorten Links is invalid.' } };
  const notInt = { error: { field: 'ShortenLinks', message: 'Shorten Links must be an integer.' } };
  assert.deepEqual(readShortenLinks({ ShortenLinks: 2 }, d), invalid);
  assert.deepEqual(readShortenLinks({ ShortenLinks: '-1' }, d), invalid);
  assert.deepEqual(readShortenLinks({ ShortenLinks: 'yes' }, d), notInt);
  assert.deepEqual(readShortenLinks({ ShortenLinks: 1.5 }, d), notInt);
  assert.deepEqual(readShortenLinks({ ShortenLinks: true }, d), notInt);
  assert.deepEqual(readShortenLinks({ ShortenLinks: [1] }, d), notInt);
  assert.deepEqual(readShortenLinks({ ShortenLinks: 1 }, undefined), invalid);
  assert.deepEqual(readShortenLinks({ ShortenLinks: 0 }, undefined), { value: false });
});

test('MSGSVC_LINK_DOMAIN: unset or blank is none; an absolute http(s) URL normalised without a trailing /; else the start stops', () => {
  const load = (v: string | undefined) =>
    loadConfig({ MSGSVC_DEMO: '0', ...(v === undefined ? {} : { MSGSVC_LINK_DOMAIN: v }) }).linkDomain;
  assert.equal(load(undefined), undefined);
  assert.equal(load('  '), undefined);
  assert.equal(load('https://go.example.com'), 'https://go.example.com');
  assert.equal(load(' https://Go.Example.com/ '), 'https://go.example.com');
  assert.equal(load('http://go.example.com:8080/x//'), 'http://go.example.com:8080/x');
  for (const bad of [
    'go.example.com',
    'ftp://go.example.com',
    'https://u:p@go.example.com',
    'https://go.example.com/?a=1',
    'https://go.example.com/#x',
    `https://${'a'.repeat(200)}.com`,
  ]) {
    assert.throws(() => load(bad), /MSGSVC_LINK_DOMAIN/, bad);
  }
});

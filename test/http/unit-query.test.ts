import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildQuery, parseParams, phpInt, phpUrlEncode } from '../../src/http/query.ts';

const entries = (q: string) => [...parseParams(q)];

describe('parseParams reads query strings the PHP way', () => {
  test('empty query', () => assert.deepEqual(entries(''), []));
  test('simple pairs keep their order', () => {
    assert.deepEqual(entries('b=2&a=1&c=3'), [
      ['b', '2'],
      ['a', '1'],
      ['c', '3'],
    ]);
  });
  test('a repeated key keeps its first position and its last value', () => {
    assert.deepEqual(entries('a=1&b=2&a=3'), [
      ['a', '3'],
      ['b', '2'],
    ]);
    assert.deepEqual(entries('access_token=x&page=2&access_token=y'), [
      ['access_token', 'y'],
      ['page', '2'],
    ]);
  });
  test('a key without = has an empty value; empty pairs are skipped', () => {
    assert.deepEqual(entries('a&&b=&c=1'), [
      ['a', ''],
      ['b', ''],
      ['c', '1'],
    ]);
  });
  test('key[]=v builds an array', () => {
    assert.deepEqual(entries('id[]=1&id[]=2&x=0'), [
      ['id', ['1', '2']],
      ['x', '0'],
    ]);
  });
  test('key[x]=v and %5B%5D-encoded brackets also build arrays', () => {
    assert.deepEqual(entries('id[a]=1'), [['id', ['1']]]);
    assert.deepEqual(entries('id%5B%5D=4'), [['id', ['4']]]);
  });
  test('a scalar after an array replaces it (last value wins), keeping the position', () => {
    assert.deepEqual(entries('a[]=1&b=2&a=3'), [
      ['a', '3'],
      ['b', '2'],
    ]);
    assert.deepEqual(entries('a=1&a[]=2'), [['a', ['2']]]);
  });
  test('+ is a space, in values and keys', () => {
    assert.deepEqual(entries('q=a+b+c&my+key=1'), [
      ['q', 'a b c'],
      ['my_key', '1'],
    ]);
  });
  test('%2B is a literal plus', () => assert.deepEqual(entries('n=%2B15551234567'), [['n', '+15551234567']]));
  test('percent escapes are decoded, including UTF-8', () => {
    assert.deepEqual(entries('n=Jos%C3%A9&s=%20x'), [
      ['n', 'José'],
      ['s', ' x'],
    ]);
  });
  test('broken %-escapes are kept as written', () => {
    assert.deepEqual(entries('x=%zz%41'), [['x', '%zzA']]);
    assert.deepEqual(entries('x=100%'), [['x', '100%']]);
    assert.deepEqual(entries('x=%'), [['x', '%']]);
    assert.deepEqual(entries('x=%4'), [['x', '%4']]);
  });
  test('. and space in a key become _ (access.token → access_token)', () => {
    assert.deepEqual(entries('access.token=abc'), [['access_token', 'abc']]);
    assert.deepEqual(entries('access%2Etoken=abc'), [['access_token', 'abc']]);
    assert.deepEqual(entries('access+token=abc'), [['access_token', 'abc']]);
    assert.deepEqual(entries('access%5Ftoken=abc'), [['access_token', 'abc']]);
  });
  test('leading spaces of a key are ignored, as PHP does', () => {
    assert.deepEqual(entries('%20access_token=abc'), [['access_token', 'abc']]);
    assert.deepEqual(entries('++page=2'), [['page', '2']]);
    assert.deepEqual(entries('%20=1&a=2'), [['a', '2']]);
  });
  test('an unclosed [ becomes _ and only the part before it is translated', () => {
    assert.deepEqual(entries('access[token=abc'), [['access_token', 'abc']]);
    assert.deepEqual(entries('a.b[c.d=1'), [['a_b_c.d', '1']]);
    assert.deepEqual(entries('a[b[c=1'), [['a_b[c', '1']]);
  });
  test('a key starting with [ is dropped', () => assert.deepEqual(entries('[a]=1&[=2&b=3'), [['b', '3']]));
  test('an = inside the value is kept', () => assert.deepEqual(entries('a=b=c'), [['a', 'b=c']]));
  test('an empty key is skipped', () => assert.deepEqual(entries('=1&a=2'), [['a', '2']]));
});

describe('phpInt behaves like a PHP (int) cast', () => {
  const cases: [string, number][] = [
    ['12', 12],
    ['12abc', 12],
    ['abc', 0],
    ['', 0],
    [' 12', 12],
    ['\n7', 7],
    ['-5', -5],
    ['+3', 3],
    ['1.9', 1],
    ['-1.9', -1],
    ['1e3', 1000],
    ['.5', 0],
    ['0x1A', 0],
    ['007', 7],
  ];
  for (const [input, out] of cases) {
    test(`(int)${JSON.stringify(input)} = ${out}`, () => assert.equal(phpInt(input, 99), out));
  }
  test('absent and array values give the fallback', () => {
    assert.equal(phpInt(undefined, 5), 5);
    assert.equal(phpInt(['1'], 5), 5);
  });
  test('huge values stay finite safe integers', () => {
    const n = phpInt('99999999999999999999999', 1);
    assert.ok(Number.isSafeInteger(n) && n > 0);
  });
});

describe('phpUrlEncode / buildQuery', () => {
  test('PHP urlencode escapes', () => {
    assert.equal(phpUrlEncode('a b'), 'a+b');
    assert.equal(phpUrlEncode('a-b_c.d~'), 'a-b_c.d%7E');
    assert.equal(phpUrlEncode("!'()*"), '%21%27%28%29%2A');
    assert.equal(phpUrlEncode('+1/2'), '%2B1%2F2');
  });
  test('a lone surrogate is written as U+FFFD, not a URIError (fuzz: query)', () => {
    assert.equal(phpUrlEncode('\ud83d\u01c5$'), '%EF%BF%BD%C7%85%24');
    assert.equal(buildQuery(new Map([['_method', '\udc00']])), '_method=%EF%BF%BD');
  });
  test('http_build_query with arrays', () => {
    assert.equal(buildQuery(parseParams('page=2&id[]=1&id[]=2&q=a+b')), 'page=2&id%5B0%5D=1&id%5B1%5D=2&q=a+b');
  });
  test('round trip of a parsed query', () => {
    const q = 'access_token=ab-c_1&per-page=5&page=3';
    assert.equal(buildQuery(parseParams(q)), q);
  });
});

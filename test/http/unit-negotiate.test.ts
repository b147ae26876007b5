import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateFormat, parseAccept } from '../../src/http/plugins/negotiate.ts';
import { HttpError } from '../../src/http/wire.ts';

const types = (header: string) => parseAccept(header).map((r) => r.type);

describe('parseAccept', () => {
  test('sorts by q, highest first', () => {
    assert.deepEqual(types('text/html;q=0.5, application/xml;q=0.8, application/json'), [
      'application/json',
      'application/xml',
      'text/html',
    ]);
  });
  test('equal q: specific types before subtype wildcards before */*', () => {
    assert.deepEqual(types('*/*, text/*, application/xml'), ['application/xml', 'text/*', '*/*']);
    assert.deepEqual(types('*/*;q=0.9, application/xml;q=0.9'), ['application/xml', '*/*']);
  });
  test('equal q and specificity: position decides', () => {
    assert.deepEqual(types('application/xml, application/json'), ['application/xml', 'application/json']);
    assert.deepEqual(types('application/json, application/xml'), ['application/json', 'application/xml']);
  });
  test('q beats specificity', () => {
    assert.deepEqual(types('application/xml;q=0.5, */*'), ['*/*', 'application/xml']);
  });
  test('reads q among other parameters, with spaces; types are kept as written (API.md §2.1)', () => {
    const ranges = parseAccept('Application/XML ; charset=utf-8 ; q=0.3, application/json;level=1');
    assert.deepEqual(
      ranges.map((r) => [r.type, r.q]),
      [
        ['application/json', 1],
        ['Application/XML', 0.3],
      ],
    );
  });
  test('a bad q counts as 0; empty parts are ignored', () => {
    assert.deepEqual(types('application/xml;q=abc, , application/json;q=0.1'), ['application/json', 'application/xml']);
  });
});

function expectHttpError(fn: () => unknown, status: number, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HttpError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.message, message);
    return true;
  });
}

describe('negotiateFormat', () => {
  const NONE = 'None of your requested content types is supported.';
  const cases: [string | undefined, 'json' | 'xml'][] = [
    [undefined, 'json'],
    ['', 'json'],
    ['application/json', 'json'],
    ['application/xml', 'xml'],
    ['application/xml; charset=UTF-8', 'xml'],
    ['*/*', 'json'],
    ['text/html, */*', 'json'],
    ['text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8', 'xml'],
    ['application/xml;q=0.5, application/json', 'json'],
    ['application/json;q=0.5, application/xml', 'xml'],
    ['application/xml, application/json', 'xml'],
    ['application/json, application/xml', 'json'],
    ['*/*;q=0.1, application/xml', 'xml'],
    ['text/plain, application/xml;q=0.1', 'xml'],
  ];
  for (const [accept, format] of cases) {
    test(`Accept ${JSON.stringify(accept)} → ${format}`, () => assert.equal(negotiateFormat(undefined, accept), format));
  }
  test('Accept matching neither format gives 406', () => {
    expectHttpError(() => negotiateFormat(undefined, 'text/html'), 406, NONE);
    expectHttpError(() => negotiateFormat(undefined, 'text/xml, text/plain'), 406, NONE);
  });
  test('media types are compared exactly, case included (API.md §2.1): 406', () => {
    expectHttpError(() => negotiateFormat(undefined, 'APPLICATION/XML'), 406, NONE);
    expectHttpError(() => negotiateFormat(undefined, 'Application/Json'), 406, NONE);
  });
  test('a subtype wildcard is not an exact match: 406', () => {
    expectHttpError(() => negotiateFormat(undefined, 'application/*'), 406, NONE);
  });
  test('_format=json|xml overrides Accept', () => {
    assert.equal(negotiateFormat('xml', 'application/json'), 'xml');
    assert.equal(negotiateFormat('json', 'application/xml'), 'json');
    assert.equal(negotiateFormat('xml', 'text/html'), 'xml');
    assert.equal(negotiateFormat('json', undefined), 'json');
  });
  test('any other _format gives 406 naming it', () => {
    expectHttpError(() => negotiateFormat('yaml', 'application/json'), 406, 'The requested response format is not supported: yaml');
    expectHttpError(() => negotiateFormat('', undefined), 406, 'The requested response format is not supported: ');
    expectHttpError(() => negotiateFormat('XML', undefined), 406, 'The requested response format is not supported: XML');
  });
  test('_format sent as an array is a 400', () => {
    assert.throws(
      () => negotiateFormat(['xml'], undefined),
      (err: unknown) => err instanceof HttpError && err.status === 400,
    );
  });
});

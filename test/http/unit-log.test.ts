import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { maskUrl } from '../../src/http/log.ts';

describe('maskUrl hides every access_token value', () => {
  const cases: [string, string, string][] = [
    ['plain key', '/v1/numbers/index?access_token=s3cr3t', '/v1/numbers/index?access_token=***'],
    [
      'plain key among others',
      '/v1/numbers/index?page=2&access_token=s3cr3t&per-page=5',
      '/v1/numbers/index?page=2&access_token=***&per-page=5',
    ],
    ['%5F-encoded key', '/v1/credits/balance?access%5Ftoken=s3cr3t', '/v1/credits/balance?access%5Ftoken=***'],
    ['%5f lowercase escape', '/v1/credits/balance?access%5ftoken=s3cr3t', '/v1/credits/balance?access%5ftoken=***'],
    ['array key', '/v1/credits/balance?access_token[]=s3cr3t', '/v1/credits/balance?access_token[]=***'],
    ['encoded array key', '/v1/credits/balance?access_token%5B%5D=s3cr3t', '/v1/credits/balance?access_token%5B%5D=***'],
    ['dotted key', '/v1/credits/balance?access.token=s3cr3t', '/v1/credits/balance?access.token=***'],
    ['key with +', '/v1/credits/balance?access+token=s3cr3t', '/v1/credits/balance?access+token=***'],
    ['repeated key', '/v1/x?access_token=a&id=1&access_token=b', '/v1/x?access_token=***&id=1&access_token=***'],
  ];
  for (const [name, url, masked] of cases) {
    test(name, () => {
      const out = maskUrl(url);
      assert.equal(out, masked);
      assert.ok(!out.includes('s3cr3t'));
    });
  }
  test('a URL without a query is unchanged', () => assert.equal(maskUrl('/v1/numbers/index'), '/v1/numbers/index'));
  test('other parameters are untouched, byte for byte', () => {
    const url = '/v1/contacts/find?number=%2B1%20555+123&x=%zz&token=abc&my_access_token=1&access_tokens=2&q=access_token';
    assert.equal(maskUrl(url), url);
  });
  test('the path and other parameters stay around a masked token', () => {
    assert.equal(
      maskUrl('/v1/groups/update?id=7&access_token=abc%2Fdef&_format=xml'),
      '/v1/groups/update?id=7&access_token=***&_format=xml',
    );
  });
  test('a broken escape in the key does not throw', () => {
    assert.equal(maskUrl('/v1/x?%zz=1&access_token=t'), '/v1/x?%zz=1&access_token=***');
  });
});

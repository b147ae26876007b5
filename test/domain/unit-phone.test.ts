import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { normalisePhone } from '../../src/domain/phone.ts';

describe('normalisePhone', () => {
  const us: string[] = [
    '+1 555 123 4567',
    '+15551234567',
    '(555) 123-4567',
    '555-123-4567',
    '5551234567',
    '15551234567',
    '1 (555) 123-4567',
  ];
  for (const raw of us) {
    test(`${JSON.stringify(raw)} in US → +15551234567`, () => {
      assert.deepEqual(normalisePhone(raw, 'US'), { e164: '+15551234567', digits: '15551234567' });
    });
  }
  test('fictional 555 numbers are accepted (possible, not necessarily valid)', () => {
    assert.deepEqual(normalisePhone('+1 555 010 0001', 'US'), { e164: '+15550100001', digits: '15550100001' });
  });
  test('a national number is read in the given region', () => {
    assert.deepEqual(normalisePhone('020 7946 0958', 'GB'), { e164: '+442079460958', digits: '442079460958' });
  });
  test('an international number ignores the region', () => {
    assert.deepEqual(normalisePhone('+44 20 7946 0958', 'US'), { e164: '+442079460958', digits: '442079460958' });
  });
  test('a local number whose E.164 form no region reads back is rejected (fuzz: phone, docs/API.md §1.7)', () => {
    // libphonenumber calls a 7-digit Canadian local number possible; as +1 and 7 digits it is not.
    for (const raw of ['5550100', '0１3１3１3']) assert.equal(normalisePhone(raw, 'CA'), null, raw);
    assert.deepEqual(normalisePhone('555 010 0199', 'CA'), { e164: '+15550100199', digits: '15550100199' });
  });
  test('a national prefix written twice after the country code is read to the number that reads back as itself (fuzz: phone)', () => {
    for (const raw of ['+440-0131313333', '+440-0１3１3１3333', '+440131313333']) {
      assert.deepEqual(normalisePhone(raw, 'US'), { e164: '+44131313333', digits: '44131313333' }, raw);
    }
  });
  const bad = ['', 'abc', '123', '+1 555', '+1 555 123 45678901', 'not a number 555', '1'.repeat(65), '+' + '5'.repeat(70)];
  for (const raw of bad) {
    test(`${JSON.stringify(raw.length > 20 ? raw.slice(0, 20) + '…' : raw)} is rejected`, () =>
      assert.equal(normalisePhone(raw, 'US'), null));
  }
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTimeFormat, nowSeconds } from '../../src/lib/time.ts';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('createTimeFormat: UTC', () => {
  const f = createTimeFormat('UTC');
  test('epoch 0', () => {
    assert.equal(f.dateTime(0), '1970-01-01 00:00:00');
    assert.equal(f.scheduleDateTime(0), '1970:01:01 00:00:00');
  });
  test('zero padding', () => {
    assert.equal(f.dateTime(at('2024-03-05T07:08:09Z')), '2024-03-05 07:08:09');
    assert.equal(f.scheduleDateTime(at('2024-03-05T07:08:09Z')), '2024:03:05 07:08:09');
  });
  test('end of day and leap day', () => {
    assert.equal(f.dateTime(at('2024-02-29T23:59:59Z')), '2024-02-29 23:59:59');
    assert.equal(f.dateTime(at('2024-12-31T23:59:59Z') + 1), '2025-01-01 00:00:00');
  });
  test('Etc/UTC is the same as UTC', () => {
    assert.equal(createTimeFormat('Etc/UTC').dateTime(at('2024-06-01T12:00:00Z')), '2024-06-01 12:00:00');
  });
});

describe('createTimeFormat: America/New_York (DST)', () => {
  const f = createTimeFormat('America/New_York');
  test('winter is UTC-5', () => {
    assert.equal(f.dateTime(at('2024-01-15T17:30:00Z')), '2024-01-15 12:30:00');
    assert.equal(f.scheduleDateTime(at('2024-01-15T17:30:00Z')), '2024:01:15 12:30:00');
  });
  test('summer is UTC-4', () => {
    assert.equal(f.dateTime(at('2024-07-04T16:00:00Z')), '2024-07-04 12:00:00');
  });
  test('spring forward: 01:59:59 EST is followed by 03:00:00 EDT', () => {
    assert.equal(f.dateTime(at('2024-03-10T06:59:59Z')), '2024-03-10 01:59:59');
    assert.equal(f.dateTime(at('2024-03-10T07:00:00Z')), '2024-03-10 03:00:00');
  });
  test('fall back: 01:30 happens twice', () => {
    assert.equal(f.dateTime(at('2024-11-03T05:30:00Z')), '2024-11-03 01:30:00');
    assert.equal(f.dateTime(at('2024-11-03T06:30:00Z')), '2024-11-03 01:30:00');
  });
  test('midnight is 00, never 24', () => {
    assert.equal(f.dateTime(at('2024-01-01T05:00:00Z')), '2024-01-01 00:00:00');
    assert.equal(f.scheduleDateTime(at('2024-01-01T05:00:00Z')), '2024:01:01 00:00:00');
  });
  test('the date changes with the zone', () => {
    assert.equal(f.dateTime(at('2024-01-01T03:00:00Z')), '2023-12-31 22:00:00');
  });
});

describe('createTimeFormat: other zones', () => {
  test('Europe/Berlin DST (CET/CEST)', () => {
    const f = createTimeFormat('Europe/Berlin');
    assert.equal(f.dateTime(at('2024-03-31T00:59:59Z')), '2024-03-31 01:59:59');
    assert.equal(f.dateTime(at('2024-03-31T01:00:00Z')), '2024-03-31 03:00:00');
    assert.equal(f.dateTime(at('2024-12-31T23:00:00Z')), '2025-01-01 00:00:00');
  });
  test('a half-hour zone (Asia/Kolkata)', () => {
    assert.equal(createTimeFormat('Asia/Kolkata').scheduleDateTime(at('2024-06-01T00:00:00Z')), '2024:06:01 05:30:00');
  });
});

test('nowSeconds is whole epoch seconds', () => {
  const n = nowSeconds();
  assert.ok(Number.isInteger(n));
  assert.ok(Math.abs(n - Date.now() / 1000) < 2);
});

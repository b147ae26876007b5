import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalInteger,
  characterLength,
  fieldLabel,
  isBlank,
  isEmpty,
  messages,
  toId,
  validate as check,
  type Input,
  type Rule,
} from '../../src/domain/validation.ts';

/** The errors of a validation (the typed values are tested in test/unit-validation-values.test.ts). */
const validate = (input: Input, rules: readonly Rule[]) => check(input, rules).errors;

describe('fieldLabel (API.md §4.4 labels)', () => {
  const cases: [string, string][] = [
    ['fname', 'Fname'],
    ['fnote', 'Fnote'],
    ['frfield', 'Frfield'],
    ['frcontact', 'Frcontact'],
    ['fvalue', 'Fvalue'],
    ['Keyword', 'Keyword'],
    ['Number', 'Number'],
    ['AutoreplyMessage', 'Autoreply Message'],
    ['Status_Id', 'Status Id'],
    ['MmsTemplateId', 'Mms Template Id'],
    ['first-name', 'First Name'],
    ['a.b', 'A B'],
  ];
  for (const [field, label] of cases) {
    test(`${field} → ${label}`, () => assert.equal(fieldLabel(field), label));
  }
});

describe('isEmpty / isBlank', () => {
  test('isEmpty: null, undefined, "", [] and {} are empty', () => {
    for (const v of [null, undefined, '', [], {}]) assert.equal(isEmpty(v), true, JSON.stringify(v));
  });
  test('isEmpty: 0, false, " ", "0", [0] are not empty', () => {
    for (const v of [0, false, ' ', '0', [0], { a: 1 }]) assert.equal(isEmpty(v), false, JSON.stringify(v));
  });
  test('isBlank: empty values and whitespace-only strings are blank', () => {
    for (const v of [null, undefined, '', [], ' ', '  \t\n ']) assert.equal(isBlank(v), true, JSON.stringify(v));
  });
  test('isBlank: real values are not blank', () => {
    for (const v of ['a', ' a ', 0, false, '0', [1]]) assert.equal(isBlank(v), false, JSON.stringify(v));
  });
});

describe('characterLength counts code points', () => {
  test('ASCII', () => assert.equal(characterLength('abc'), 3));
  test('empty', () => assert.equal(characterLength(''), 0));
  test('accented letters are one character each', () => assert.equal(characterLength('José Chloé'), 10));
  test('an emoji (surrogate pair) is one character', () => {
    assert.equal('😀'.length, 2);
    assert.equal(characterLength('😀'), 1);
    assert.equal(characterLength('a😀b'), 3);
  });
  test('CJK', () => assert.equal(characterLength('日本語'), 3));
  test('a lone surrogate counts as one', () => assert.equal(characterLength('a\uD800b'), 3));
});

describe('canonicalInteger', () => {
  const accepted: [unknown, string][] = [
    [12, '12'],
    ['12', '12'],
    ['+7', '7'],
    ['-3', '-3'],
    [0, '0'],
    ['007', '7'],
    [-42, '-42'],
  ];
  for (const [input, out] of accepted) {
    test(`accepts ${JSON.stringify(input)} → ${out}`, () => assert.equal(canonicalInteger(input), out));
  }
  const rejected: unknown[] = [
    '12a',
    1.5,
    true,
    false,
    [],
    [12],
    ' 12',
    '12 ',
    '',
    '+',
    '1.0',
    '1e3',
    null,
    undefined,
    {},
    Number.NaN,
    Infinity,
  ];
  for (const input of rejected) {
    test(`rejects ${typeof input === 'number' ? String(input) : JSON.stringify(input)}`, () => assert.equal(canonicalInteger(input), null));
  }
  test('toId takes positive safe integers only', () => {
    assert.equal(toId('7'), 7);
    assert.equal(toId('0'), null);
    assert.equal(toId('-3'), null);
    assert.equal(toId('99999999999999999999'), null);
  });
});

describe('validate', () => {
  const groupRules: Rule[] = [
    { field: 'fname', rule: 'required' },
    { field: 'fname', rule: 'string', min: 3, max: 255 },
    { field: 'fnote', rule: 'string', min: 3, max: 255 },
  ];

  test('valid input gives no errors', () => {
    assert.deepEqual(validate({ fname: 'abc', fnote: 'xyz' }, groupRules), []);
  });
  test('missing required field', () => {
    assert.deepEqual(validate({}, groupRules), [{ field: 'fname', message: 'Fname cannot be blank.' }]);
  });
  test('whitespace-only counts as blank', () => {
    assert.deepEqual(validate({ fname: '   ' }, groupRules), [{ field: 'fname', message: 'Fname cannot be blank.' }]);
  });
  test('only the first error of a field is reported (required stops the string rule)', () => {
    const errors = validate({ fname: '' }, groupRules);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.message, 'Fname cannot be blank.');
  });
  test('min and max wording, plural', () => {
    assert.deepEqual(validate({ fname: 'ab' }, groupRules), [{ field: 'fname', message: 'Fname should contain at least 3 characters.' }]);
    assert.deepEqual(validate({ fname: 'x'.repeat(256) }, groupRules), [
      { field: 'fname', message: 'Fname should contain at most 255 characters.' },
    ]);
  });
  test('singular wording for 1', () => {
    const rules: Rule[] = [{ field: 'a', rule: 'string', min: 1, max: 1 }];
    assert.deepEqual(validate({ a: 'xy' }, rules), [{ field: 'a', message: 'A should contain at most 1 character.' }]);
    const rules2: Rule[] = [{ field: 'a', rule: 'string', min: 2 }];
    assert.deepEqual(validate({ a: 'x' }, rules2), [{ field: 'a', message: 'A should contain at least 2 characters.' }]);
  });
  test('lengths count characters, not UTF-16 units or bytes', () => {
    assert.deepEqual(validate({ fname: '😀😀😀' }, groupRules), []);
    assert.deepEqual(validate({ fname: '😀😀' }, groupRules), [{ field: 'fname', message: 'Fname should contain at least 3 characters.' }]);
    assert.deepEqual(validate({ fname: 'é'.repeat(255) }, groupRules), []);
  });
  test('non-string gives "must be a string."', () => {
    assert.deepEqual(validate({ fname: 123 }, groupRules), [{ field: 'fname', message: 'Fname must be a string.' }]);
    assert.deepEqual(validate({ fname: 'abc', fnote: ['x'] }, groupRules), [{ field: 'fnote', message: 'Fnote must be a string.' }]);
  });
  test('optional rules skip empty values (skipOnEmpty)', () => {
    for (const fnote of [undefined, null, '', []]) {
      assert.deepEqual(validate({ fname: 'abc', fnote }, groupRules), [], JSON.stringify(fnote));
    }
  });
  test('whitespace is not empty for optional string rules', () => {
    assert.deepEqual(validate({ fname: 'abc', fnote: ' ' }, groupRules), [
      { field: 'fnote', message: 'Fnote should contain at least 3 characters.' },
    ]);
  });
  test('errors of several fields come in rule order', () => {
    const rules: Rule[] = [
      { field: 'frfield', rule: 'required' },
      { field: 'frcontact', rule: 'required' },
      { field: 'fvalue', rule: 'required' },
      { field: 'frfield', rule: 'integer' },
      { field: 'frcontact', rule: 'integer' },
      { field: 'fvalue', rule: 'string', max: 255 },
    ];
    assert.deepEqual(validate({}, rules), [
      { field: 'frfield', message: 'Frfield cannot be blank.' },
      { field: 'frcontact', message: 'Frcontact cannot be blank.' },
      { field: 'fvalue', message: 'Fvalue cannot be blank.' },
    ]);
    assert.deepEqual(validate({ frfield: 'x', frcontact: '7', fvalue: 5 }, rules), [
      { field: 'frfield', message: 'Frfield must be an integer.' },
      { field: 'fvalue', message: 'Fvalue must be a string.' },
    ]);
    // Order follows the first failing rule, not the input's key order.
    assert.deepEqual(
      validate({ fvalue: 'x'.repeat(256), frcontact: 1.5, frfield: 3 }, rules).map((e) => e.field),
      ['frcontact', 'fvalue'],
    );
  });
  test('integer rule accepts quoted digit strings and rejects the rest', () => {
    const rules: Rule[] = [{ field: 'Number', rule: 'integer' }];
    for (const v of [12, '12', '+7', '-3']) assert.deepEqual(validate({ Number: v }, rules), [], JSON.stringify(v));
    for (const v of ['12a', 1.5, true, [1], ' 12']) {
      assert.deepEqual(validate({ Number: v }, rules), [{ field: 'Number', message: 'Number must be an integer.' }], JSON.stringify(v));
    }
  });
  test('labels with capitals in messages', () => {
    const rules: Rule[] = [{ field: 'AutoreplyMessage', rule: 'string' }];
    assert.deepEqual(validate({ AutoreplyMessage: 5 }, rules), [
      { field: 'AutoreplyMessage', message: 'Autoreply Message must be a string.' },
    ]);
  });
  test('unknown keys are ignored', () => {
    assert.deepEqual(validate({ fname: 'abc', other: 1, fname2: '' }, groupRules), []);
  });
  test('database rule messages', () => {
    assert.equal(messages.taken('Keyword', 'JOIN'), 'Keyword "JOIN" has already been taken.');
    assert.equal(messages.invalid('frfield'), 'Frfield is invalid.');
  });
});

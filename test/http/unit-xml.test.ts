import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLValidator } from 'fast-xml-parser';
import { escapeXmlText, toXmlDocument } from '../../src/http/serializers/xml.ts';

const DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';
const doc = (body: string) => `${DECL}${body}\n`;

describe('toXmlDocument (API.md §2.3)', () => {
  test('a list of records: one <item> per record', () => {
    const out = toXmlDocument([
      { Number: '55155', Status_Id: 0, Status_Description: 'Active', Blocked_Date: null },
      { Number: '15550100003', Status_Id: 301, Status_Description: 'Temporarily blocked.', Blocked_Date: '2024-01-02 03:04:05' },
    ]);
    assert.equal(
      out,
      doc(
        '<response>' +
          '<item><Number>55155</Number><Status_Id>0</Status_Id><Status_Description>Active</Status_Description><Blocked_Date></Blocked_Date></item>' +
          '<item><Number>15550100003</Number><Status_Id>301</Status_Id><Status_Description>Temporarily blocked.</Status_Description><Blocked_Date>2024-01-02 03:04:05</Blocked_Date></item>' +
          '</response>',
      ),
    );
  });
  test('a single record has its fields directly under <response>', () => {
    assert.equal(toXmlDocument({ AvailableCredits: 2500 }), doc('<response><AvailableCredits>2500</AvailableCredits></response>'));
  });
  test('an empty list is <response/>', () => {
    assert.equal(toXmlDocument([]), doc('<response/>'));
  });
  test('null and "" become <X></X>; an empty array becomes <X/>', () => {
    assert.equal(toXmlDocument({ A: null, B: '', C: [] }), doc('<response><A></A><B></B><C/></response>'));
  });
  test('a nested array becomes <X><item>…</item></X>', () => {
    assert.equal(
      toXmlDocument({ Id: 1, PhoneNumberIds: [1, 2] }),
      doc('<response><Id>1</Id><PhoneNumberIds><item>1</item><item>2</item></PhoneNumberIds></response>'),
    );
  });
  test('nested records inside an array', () => {
    assert.equal(
      toXmlDocument([{ Value: [{ Id: 3, Entry: 'Blue' }] }]),
      doc('<response><item><Value><item><Id>3</Id><Entry>Blue</Entry></item></Value></item></response>'),
    );
  });
  test('booleans are true/false', () => {
    assert.equal(toXmlDocument({ a: true, b: false }), doc('<response><a>true</a><b>false</b></response>'));
  });
  test('0 is rendered, not treated as empty', () => {
    assert.equal(toXmlDocument({ a: 0 }), doc('<response><a>0</a></response>'));
  });
  test('& < > are escaped; quotes are left alone', () => {
    assert.equal(
      toXmlDocument({ Note: 'In-store events & <workshops> "x" \'y\'' }),
      doc('<response><Note>In-store events &amp; &lt;workshops&gt; "x" \'y\'</Note></response>'),
    );
  });
  test('C0 controls are dropped; tab and LF are kept, CR is written &#13; (API.md §2.3)', () => {
    assert.equal(toXmlDocument({ a: 'a\u0000b\u0001c\u0008d\u000Be\u000Cf\u001Fg' }), doc('<response><a>abcdefg</a></response>'));
    assert.equal(toXmlDocument({ a: 'x\ty\nz\r' }), doc('<response><a>x\ty\nz&#13;</a></response>'));
  });
  test('lone surrogates are dropped; pairs and non-ASCII are kept', () => {
    assert.equal(toXmlDocument({ a: 'a\uD800b\uDC00c' }), doc('<response><a>abc</a></response>'));
    assert.equal(toXmlDocument({ a: 'é😀日' }), doc('<response><a>é😀日</a></response>'));
  });
  test('U+FFFE and U+FFFF are dropped', () => {
    assert.equal(escapeXmlText('a\uFFFEb\uFFFFc'), 'abc');
  });
  test('the error body shape', () => {
    assert.equal(
      toXmlDocument({ name: 'Unauthorized', message: 'Your request was made with invalid credentials.', code: 0, status: 401 }),
      doc(
        '<response><name>Unauthorized</name><message>Your request was made with invalid credentials.</message><code>0</code><status>401</status></response>',
      ),
    );
  });
  test('a 422 list', () => {
    assert.equal(
      toXmlDocument([{ field: 'fname', message: 'Fname cannot be blank.' }]),
      doc('<response><item><field>fname</field><message>Fname cannot be blank.</message></item></response>'),
    );
  });
  test('output is well-formed XML, on two lines', () => {
    const out = toXmlDocument([{ a: 'x & y < z', b: [], c: [[1, 2], []], d: null, e: '\u0001' }]);
    assert.equal(XMLValidator.validate(out), true);
    assert.equal(out.split('\n').length, 3);
    assert.ok(out.endsWith('\n'));
  });
});

/**
 * The SMPP codec and settings (src/dispatch/smpp-codec.ts, smpp-url.ts, config.ts): parts sent =
 * segments charged (API.md §11.1) for any text; GSM-7 text survives encode → decode; the
 * framing across arbitrary chunk boundaries; receipts read from the TLVs and from the text; the
 * URL and the settings. The wire itself is checked against Perl's Net::SMPP in carrier-smpp.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { smsSegments } from '../../src/domain/segments.ts';
import {
  CMD,
  PduReader,
  TAG,
  decodeGsm,
  decodeShortMessage,
  decodeUcs2,
  encodePdu,
  encodeShortMessage,
  encodeText,
  parseReceipt,
  receiptOutcome,
  splitUdh,
  statusName,
} from '../../src/dispatch/smpp-codec.ts';
import { parseSmppUrl } from '../../src/lib/smpp-url.ts';

const GSM_CHARS = [...'@£$¥èéùìòÇ\nØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCXYZÄÖÑÜ§¿abcxyzäöñüà^{}\\[~]|€'];

test('SMPP codec: the parts of any text are the segments it was charged, with data_coding 0 or 8 and a UDH on each part of a long text', () => {
  const anyText = fc.oneof(
    fc.array(fc.constantFrom(...GSM_CHARS), { maxLength: 700 }).map((a) => a.join('')),
    fc.string({ unit: 'grapheme', maxLength: 300 }),
    fc.array(fc.constantFrom(...GSM_CHARS, 'ж', '😀', 'é'), { maxLength: 400 }).map((a) => a.join('')),
  );
  fc.assert(
    fc.property(anyText, fc.integer({ min: 0, max: 255 }), (text, ref) => {
      const charged = smsSegments(text);
      const enc = encodeText(text, ref);
      assert.equal(enc.encoding, charged.encoding);
      assert.equal(enc.parts.length, charged.segments);
      assert.equal(enc.dataCoding, charged.encoding === 'GSM-7' ? 0 : 8);
      const bodies = enc.parts.map((p) => (enc.parts.length > 1 ? splitUdh(p) : { concat: undefined, payload: p }));
      bodies.forEach((b, i) => {
        if (enc.parts.length > 1) assert.deepEqual(b.concat, { reference: ref, total: enc.parts.length, seq: i + 1 });
        assert.ok(b.payload.length <= (enc.dataCoding === 0 ? (enc.parts.length > 1 ? 153 : 160) : enc.parts.length > 1 ? 134 : 140));
      });
      const joined = Buffer.concat(bodies.map((b) => b.payload));
      assert.equal(enc.dataCoding === 0 ? decodeGsm(joined) : decodeUcs2(joined), text);
    }),
    { numRuns: 300 },
  );
});

test('SMPP codec: GSM-7 unpacked, one septet per octet; extension characters as 0x1B + code', () => {
  assert.equal(encodeText('A@£€{', 0).parts[0]!.toString('hex'), '4100011b651b28');
  assert.equal(decodeGsm(Buffer.from('4100011b651b28', 'hex')), 'A@£€{');
});

test('SMPP codec: PDUs split and joined across any chunk boundaries; a bad length is refused', () => {
  const sm = encodeShortMessage({
    serviceType: '',
    sourceTon: 1,
    sourceNpi: 1,
    source: '15551230001',
    destTon: 0,
    destNpi: 1,
    dest: '55155',
    esmClass: 0x04,
    protocolId: 0,
    priority: 0,
    scheduleDeliveryTime: '',
    validityPeriod: '',
    registeredDelivery: 0,
    replaceIfPresent: 0,
    dataCoding: 0,
    smDefaultMsgId: 0,
    shortMessage: Buffer.from('id:abc sub:001 dlvrd:000 submit date:2611231200 done date:2611231201 stat:UNDELIV err:012 text:'),
    tlvs: [
      { tag: TAG.receipted_message_id, value: Buffer.from('abc\0') },
      { tag: TAG.message_state, value: Buffer.from([5]) },
    ],
  });
  const stream = Buffer.concat([encodePdu(CMD.deliver_sm, 0, 7, sm), encodePdu(CMD.enquire_link, 0, 8)]);
  for (let cut = 1; cut < stream.length; cut += 7) {
    const r = new PduReader();
    const pdus = [...r.push(stream.subarray(0, cut)), ...r.push(stream.subarray(cut))];
    assert.deepEqual(
      pdus.map((p) => [p.commandId, p.sequence]),
      [
        [CMD.deliver_sm, 7],
        [CMD.enquire_link, 8],
      ],
    );
  }
  const decoded = decodeShortMessage(new PduReader().push(stream)[0]!.body);
  assert.deepEqual(parseReceipt(decoded), { ids: ['abc'], stat: 'UNDELIV', err: '012' });
  assert.throws(() => new PduReader().push(Buffer.from('00000003000000040000000000000001', 'hex')), /command_length 3 out of range/);
});

test('SMPP codec: receipts by text alone, states, status names', () => {
  const base = {
    serviceType: '',
    sourceTon: 0,
    sourceNpi: 0,
    source: '',
    destTon: 0,
    destNpi: 0,
    dest: '',
    esmClass: 4,
    protocolId: 0,
    priority: 0,
    scheduleDeliveryTime: '',
    validityPeriod: '',
    registeredDelivery: 0,
    replaceIfPresent: 0,
    dataCoding: 0,
    smDefaultMsgId: 0,
  };
  assert.deepEqual(
    parseReceipt({
      ...base,
      shortMessage: Buffer.from('id:77 sub:001 dlvrd:001 submit date:x done date:y stat:DELIVRD err:000'),
      tlvs: new Map(),
    }),
    { ids: ['77'], stat: 'DELIVRD', err: '000' },
  );
  assert.equal(parseReceipt({ ...base, shortMessage: Buffer.from('no id here'), tlvs: new Map() }), undefined);
  assert.deepEqual(['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'UNKNOWN', 'DELETED', 'ENROUTE', 'ACCEPTD'].map(receiptOutcome), [
    'delivered',
    'undelivered',
    'undelivered',
    'undelivered',
    'undelivered',
    'undelivered',
    'intermediate',
    'intermediate',
  ]);
  assert.deepEqual(
    [statusName(0x58), statusName(0x14), statusName(0x0b), statusName(0x401)],
    ['ESME_RTHROTTLED', 'ESME_RMSGQFUL', 'ESME_RINVDSTADR', 'ESME_0x00000401'],
  );
});

test('SMPP settings: MSGSVC_SMPP_URL chooses the carrier; bad URLs and values are refused at start without echoing the password', () => {
  assert.deepEqual(parseSmppUrl('smpps://user%40x:p%3Ass@smsc.example:3550'), {
    tls: true,
    host: 'smsc.example',
    port: 3550,
    systemId: 'user@x',
    password: 'p:ss',
  });
  assert.equal(parseSmppUrl('smpp://u:p@[::1]').port, 2775);
  const base = { DATABASE_URL: ':memory:' };
  const c = loadConfig({ ...base, MSGSVC_SMPP_URL: 'smpp://u:p@127.0.0.1:2775' });
  assert.deepEqual([c.carrier, c.smppRate, c.smppWindow, c.smppTimeoutMs, c.smppEnquireMs], ['smpp', 100, 10, 10_000, 30_000]);
  assert.equal(loadConfig(base).carrier, 'sandbox');
  assert.equal(loadConfig({ ...base, MSGSVC_SMPP_URL: 'smpp://u:p@h', MSGSVC_CARRIER: 'sandbox' }).carrier, 'sandbox');
  for (const [env, re] of [
    [{ MSGSVC_SMPP_URL: 'http://u:p@h' }, /MSGSVC_SMPP_URL must start with smpp/],
    [{ MSGSVC_SMPP_URL: 'smpp://h:2775' }, /no system_id/],
    [{ MSGSVC_SMPP_URL: 'smpp://u:toolongpassword@h' }, /password longer than 8/],
    [{ MSGSVC_CARRIER: 'smpp' }, /needs MSGSVC_SMPP_URL/],
    [{ MSGSVC_SMPP_URL: 'smpp://u:p@h', MSGSVC_SMPP_WINDOW: '0' }, /MSGSVC_SMPP_WINDOW/],
  ] as const) {
    assert.throws(
      () => loadConfig({ ...base, ...env }),
      (err: Error) => err instanceof ConfigError && re.test(err.message) && !err.message.includes('toolongpassword'),
    );
  }
});

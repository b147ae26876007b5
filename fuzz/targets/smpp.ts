/**
 * The SMPP 3.4 wire (src/dispatch/smpp-codec.ts) and the session state machine
 * (src/dispatch/smpp-session.ts), fed the bytes an SMSC sends, as src/dispatch/smpp.ts reads them:
 * the stream is framed by `PduReader` (fed in chunks of the input's sizes, as a socket delivers
 * it); a submit_sm_resp's id is read by `decodeMessageId` (with `statusName` of its status); a
 * deliver_sm's body by `decodeShortMessage`, then, by its esm_class, either `parseReceipt` and
 * `receiptOutcome`, or the inbound path (message_payload TLV or short_message, `splitUdh` when
 * UDHI is set, `decodeText` by data_coding). The ESME's own text goes out through `encodeText`
 * and `encodeShortMessage`, as a submit. With `session` set, the same bytes are also the SMSC's
 * side of a real `openSession` over loopback TCP (a local server on 127.0.0.1, port 0), answering
 * the bind and then the ESME's requests.
 *
 * Oracle:
 * - only SmppProtocolError escapes the decoders (splitUdh, decodeText, decodeMessageId,
 *   parseReceipt, receiptOutcome never throw);
 * - framing: the PDUs PduReader returns, whatever the chunking, are a prefix of the PDUs of the
 *   whole stream read at once (an independent framer), all of them when no command_length is out
 *   of [16, 70000], and it throws exactly when one is; `encodePdu` of each gives back the exact
 *   bytes it was read from;
 * - deliver_sm round trip: `encodeShortMessage(decodeShortMessage(body))` reproduces the
 *   mandatory parameters byte for byte, and the whole body exactly when its TLVs have distinct tags
 *   and no trailing 1-3 bytes (a Map keeps one value per tag; `decodeTlvs` skips a tail shorter
 *   than a TLV header); decoding the re-encoding gives the same fields; a short_message of 255
 *   octets (decodable, not encodable: SMPP's limit is 254) is refused by the encoder with RangeError;
 * - parseReceipt equals the documented reading (ids: receipted_message_id TLV up to its NUL,
 *   trimmed, then the text's `id:` word, without duplicates; stat: a 1-octet message_state TLV
 *   1-8, else the text's `stat:` upper-cased, else UNKNOWN; err: the text's `err:`), and
 *   receiptOutcome maps DELIVRD → delivered, ENROUTE/ACCEPTD → intermediate, anything else →
 *   undelivered;
 * - splitUdh reads only information elements that lie within the UDH (the last concatenation IE
 *   wins) and returns the bytes after the UDH; decodeText returns one character per septet or
 *   octet (UCS-2: one code unit per two octets, exactly the bytes back);
 * - encodeText's parts, decoded, give back the text, with the UDH `05 00 03 ref total seq`;
 * - session: openSession resolves only on a bind_transceiver_resp with ESME_ROK for sequence 1,
 *   and otherwise rejects with SmppBindError (that response's status), SmppTimeoutError or
 *   SmppClosedError; each request resolves with a response PDU the SMSC sent for its sequence
 *   (its resp or generic_nack) or rejects with SmppTimeoutError / SmppClosedError; `closed`
 *   resolves with undefined, SmppClosedError, SmppProtocolError or the keep-alive's failure; the
 *   ESME's bytes are well-formed PDUs: bind_transceiver #1 first, then its own requests with
 *   increasing sequence numbers, and its answers to the SMSC's requests in their order, each the
 *   documented one (enquire_link_resp, unbind_resp, the deliver_sm/data_sm answer of onRequest,
 *   generic_nack ESME_RINVCMDID for any other request, nothing for alert_notification); no uncaught
 *   exception or unhandled rejection; and every input ends within maxMs (short session timeouts).
 */
import net from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  CMD,
  ESM,
  MAX_PDU_LENGTH,
  PduReader,
  STATUS,
  SmppProtocolError,
  TAG,
  decodeMessageId,
  decodeShortMessage,
  decodeText,
  encodeBind,
  encodeMessageId,
  encodePdu,
  encodeShortMessage,
  encodeText,
  isResponse,
  parseReceipt,
  receiptOutcome,
  respOf,
  splitUdh,
  statusName,
  type Pdu,
  type ShortMessage,
} from '../../src/dispatch/smpp-codec.ts';
import { SmppBindError, SmppClosedError, SmppTimeoutError, openSession, type SmppSession } from '../../src/dispatch/smpp-session.ts';
import { check, refusesOnlyWithSync, type FuzzTarget } from '../target.ts';

type Input = {
  /** What the SMSC sends first, answering the bind (also the start of the stream the codec reads). */
  bindReply: Uint8Array;
  /** What the SMSC sends after the ESME's requests. */
  stream: Uint8Array;
  /** Chunk sizes, used in turn, that the bytes are fed in. */
  chunks: number[];
  /** Also run the bytes through a real session. */
  session: boolean;
  /** The ESME's requests once bound: submit (a text through encodeText), enquire_link, data_sm, unbind. */
  requests: string[];
  /** The text the ESME submits. */
  text: string;
  /** ms to wait after the stream before closing (bounded). */
  linger: number;
  /** Close with unbind (close()) rather than at once (destroy()). */
  unbind: boolean;
  /** Start the enquire_link keep-alive (every few ms). */
  keepAlive: boolean;
  /** Connect to a port nobody listens on. */
  refused: boolean;
  /** Connect with TLS (to the plain server: the handshake fails or times out). */
  tls: boolean;
  /** Send one more request after the stream (the session may be closed by then). */
  late: boolean;
};

// ------------------------------------------------------------------ grammar

const u8 = fc.integer({ min: 0, max: 255 });
const bytes = (maxLength: number) => fc.uint8Array({ maxLength });
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
const cstr = (s: string): Buffer => latin1(`${s}\0`);

/** Sequence numbers: the ESME's own (1 = the bind, 2.. its requests) and any other. */
const seqArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(1, 2, 3, 4, 5, 6) },
  { weight: 1, arbitrary: fc.constantFrom(0, 0x7fffffff, 0x80000000, 0xffffffff) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }) },
);
const statusArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.constantFrom(...Object.values(STATUS)) },
  { weight: 1, arbitrary: fc.constantFrom(0x400, 0x4ff, 0xffffffff) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }) },
);
const address = fc.oneof(
  fc.stringMatching(/^\+?[0-9]{1,15}$/),
  fc.constantFrom('', 'Msgsvc', ' 44 7700-900 123 ', 'é'),
  fc.string({ maxLength: 20, unit: fc.integer({ min: 1, max: 255 }).map((c) => String.fromCharCode(c)) }),
);
const smppDate = fc.oneof(fc.stringMatching(/^[0-9]{10}$/), fc.constantFrom('', '2401011200', 'x'));
const statWord = fc.oneof(
  fc.constantFrom('DELIVRD', 'UNDELIV', 'EXPIRED', 'DELETED', 'ACCEPTD', 'UNKNOWN', 'REJECTD', 'ENROUTE'),
  fc.constantFrom('delivrd', 'Enroute', '', 'DELIVRD\0', 'ß'),
  fc.stringMatching(/^[A-Za-z0-9]{0,9}$/),
);
const idWord = fc.oneof(fc.stringMatching(/^[0-9a-f]{1,16}$/), fc.constantFrom('', 'id:', ' ', '0'), fc.string({ maxLength: 12 }));
const sep = fc.constantFrom(' ', '  ', '\t', '\n', '\xa0', '');

/** Appendix B receipt text, with its words sometimes missing, repeated, re-cased or glued. */
const receiptText = fc
  .record({
    idKey: fc.constantFrom('id:', 'ID:', 'Id:', 'xid:', ''),
    id: idWord,
    sub: fc.constantFrom('sub:001 ', 'sub:000 ', ''),
    dlvrd: fc.constantFrom('dlvrd:001 ', 'dlvr:001 ', ''),
    submit: smppDate,
    done: smppDate,
    statKey: fc.constantFrom('stat:', 'STAT:', 'stat', ''),
    stat: statWord,
    errKey: fc.constantFrom('err:', 'ERR:', ''),
    err: fc.constantFrom('000', '0', '001', '0AB', 'x', ''),
    text: fc.string({ maxLength: 20 }),
    s: sep,
    lead: fc.constantFrom('', ' ', 'x'),
  })
  .map(
    (r) =>
      `${r.lead}${r.idKey}${r.id}${r.s}${r.sub}${r.dlvrd}submit date:${r.submit} done date:${r.done}${r.s}` +
      `${r.statKey}${r.stat} ${r.errKey}${r.err} text:${r.text}`,
  )
  .map((s) => latin1(s.slice(0, 254)));

/** A UDH: concatenation IEs (8- and 16-bit reference), other IEs, and broken lengths. */
const ie = fc.oneof(
  fc.tuple(u8, u8, u8).map(([r, t, s]) => [0x00, 3, r, t, s]),
  fc.tuple(fc.integer({ min: 0, max: 0xffff }), u8, u8).map(([r, t, s]) => [0x08, 4, r >> 8, r & 0xff, t, s]),
  fc.tuple(u8, bytes(6)).map(([iei, v]) => [iei, v.length, ...v]),
  fc.tuple(fc.constantFrom(0x00, 0x08), u8, bytes(5)).map(([iei, len, v]) => [iei, len, ...v]),
);
const udh = fc
  .record({ ies: fc.array(ie, { maxLength: 3 }), delta: fc.constantFrom(0, 0, 0, 0, -1, 1, -3, 5, 200), payload: bytes(40) })
  .map(({ ies, delta, payload }) => {
    const body = ies.flat();
    const udhl = Math.max(0, Math.min(255, body.length + delta));
    return Buffer.from([udhl, ...body, ...payload]);
  });
const gsmBytes = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.constant(0x1b), u8), { maxLength: 160 })
  .map((a) => Buffer.from(a));
const ucs2Bytes = fc.string({ maxLength: 60, unit: 'binary' }).chain((s) =>
  fc.boolean().map((odd) => {
    const b = Buffer.from(s, 'utf16le').swap16();
    return odd ? Buffer.concat([b, Buffer.from([0x41])]) : b;
  }),
);
const shortMessageBytes = fc.oneof(
  receiptText,
  gsmBytes,
  ucs2Bytes.map((b) => b.subarray(0, 254)),
  udh,
  bytes(254).map((b) => Buffer.from(b)),
  fc.constantFrom(Buffer.alloc(0), Buffer.alloc(254, 0x41), Buffer.alloc(255, 0x42)),
);

type RawTlv = { tag: number; value: Buffer; declared?: number };
const tlv: fc.Arbitrary<RawTlv> = fc.oneof(
  idWord.map((id) => ({ tag: TAG.receipted_message_id, value: cstr(id) })),
  idWord.map((id) => ({ tag: TAG.receipted_message_id, value: latin1(` ${id} `) })),
  fc.integer({ min: 0, max: 9 }).map((s) => ({ tag: TAG.message_state, value: Buffer.from([s]) })),
  bytes(3).map((v) => ({ tag: TAG.message_state, value: Buffer.from(v) })),
  fc
    .oneof(
      shortMessageBytes,
      bytes(600).map((b) => Buffer.from(b)),
    )
    .map((v) => ({ tag: TAG.message_payload, value: v })),
  fc.integer({ min: 0, max: 0xffff }).map((r) => ({ tag: TAG.sar_msg_ref_num, value: Buffer.from([r >> 8, r & 0xff]) })),
  u8.map((n) => ({ tag: TAG.sar_total_segments, value: Buffer.from([n]) })),
  u8.map((n) => ({ tag: TAG.sar_segment_seqnum, value: Buffer.from([n]) })),
  fc.tuple(fc.constantFrom(TAG.sar_msg_ref_num, TAG.sar_total_segments, TAG.sar_segment_seqnum), bytes(3)).map(([tag, v]) => ({
    tag,
    value: Buffer.from(v),
  })),
  fc.tuple(fc.integer({ min: 0, max: 0xffff }), bytes(8)).map(([tag, v]) => ({ tag, value: Buffer.from(v) })),
  // A declared length past the end of the PDU.
  fc
    .tuple(fc.constantFrom(TAG.message_payload, TAG.receipted_message_id, 0x1400), bytes(4), fc.integer({ min: 5, max: 0xffff }))
    .map(([tag, v, declared]) => ({ tag, value: Buffer.from(v), declared })),
);

function tlvBytes(tlvs: readonly RawTlv[]): Buffer {
  return Buffer.concat(
    tlvs.map((t) => {
      const b = Buffer.alloc(4 + t.value.length);
      b.writeUInt16BE(t.tag, 0);
      b.writeUInt16BE(t.declared ?? t.value.length, 2);
      t.value.copy(b, 4);
      return b;
    }),
  );
}

/** A deliver_sm (or submit_sm: the same layout) body, optionally with a wrong sm_length or a tail. */
const shortMessageBody = fc
  .record({
    serviceType: fc.constantFrom('', 'CMT', 'WAP', 'USSD'),
    sourceTon: fc.constantFrom(0, 1, 5, 0xff),
    sourceNpi: fc.constantFrom(0, 1, 0xff),
    source: address,
    destTon: fc.constantFrom(0, 1),
    destNpi: fc.constantFrom(0, 1),
    dest: address,
    esmClass: fc.oneof(fc.constantFrom(0, ESM.DELIVERY_RECEIPT, 0x20, ESM.UDHI, ESM.UDHI | ESM.DELIVERY_RECEIPT, 0x08, 0x3c), u8),
    protocolId: fc.constantFrom(0, 0x7f),
    priority: fc.constantFrom(0, 1, 3),
    scheduleDeliveryTime: fc.constantFrom('', '240101120000000+'),
    validityPeriod: fc.constantFrom('', '000001000000000R'),
    registeredDelivery: fc.constantFrom(0, 1),
    replaceIfPresent: fc.constantFrom(0, 1),
    dataCoding: fc.oneof(fc.constantFrom(0, 1, 3, 8, 4, 0xf0), u8),
    smDefaultMsgId: fc.constant(0),
    shortMessage: shortMessageBytes,
    tlvs: fc.array(tlv, { maxLength: 4 }),
    smLength: fc.oneof({ weight: 8, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: u8 }),
    tail: fc.oneof({ weight: 8, arbitrary: fc.constant(Buffer.alloc(0)) }, { weight: 1, arbitrary: bytes(3).map((b) => Buffer.from(b)) }),
  })
  .map((m) => {
    const sm = m.shortMessage.subarray(0, 255);
    const head = Buffer.concat([
      cstr(m.serviceType),
      Buffer.from([m.sourceTon, m.sourceNpi]),
      cstr(m.source),
      Buffer.from([m.destTon, m.destNpi]),
      cstr(m.dest),
      Buffer.from([m.esmClass, m.protocolId, m.priority]),
      cstr(m.scheduleDeliveryTime),
      cstr(m.validityPeriod),
      Buffer.from([m.registeredDelivery, m.replaceIfPresent, m.dataCoding, m.smDefaultMsgId, m.smLength < 0 ? sm.length : m.smLength]),
    ]);
    return Buffer.concat([head, sm, tlvBytes(m.tlvs), m.tail]);
  });

const dataSmBody = fc
  .record({ source: address, dest: address, esm: u8, dc: u8, tlvs: fc.array(tlv, { maxLength: 3 }) })
  .map((d) =>
    Buffer.concat([
      cstr(''),
      Buffer.from([1, 1]),
      cstr(d.source),
      Buffer.from([1, 1]),
      cstr(d.dest),
      Buffer.from([d.esm, 1, d.dc]),
      tlvBytes(d.tlvs),
    ]),
  );

type PduSpec = { commandId: number; status: number; sequence: number; body: Buffer };
const pdu = (commandId: fc.Arbitrary<number>, body: fc.Arbitrary<Buffer>, status = statusArb, seq = seqArb): fc.Arbitrary<PduSpec> =>
  fc.record({ commandId, status, sequence: seq, body });
const empty = fc.constant(Buffer.alloc(0));

const pduSpec: fc.Arbitrary<PduSpec> = fc.oneof(
  { weight: 6, arbitrary: pdu(fc.constant(CMD.deliver_sm), shortMessageBody, fc.constant(0)) },
  {
    weight: 4,
    arbitrary: pdu(
      fc.constant(respOf(CMD.submit_sm)),
      fc.oneof(idWord.map(cstr), empty, idWord.map(latin1), fc.constant(cstr('abc\0def'))),
      statusArb,
      fc.constantFrom(2, 3, 4, 5, 6),
    ),
  },
  { weight: 2, arbitrary: pdu(fc.constant(CMD.enquire_link), empty, fc.constant(0)) },
  { weight: 1, arbitrary: pdu(fc.constant(respOf(CMD.enquire_link)), empty) },
  { weight: 1, arbitrary: pdu(fc.constant(CMD.unbind), empty, fc.constant(0)) },
  { weight: 1, arbitrary: pdu(fc.constant(respOf(CMD.unbind)), empty) },
  { weight: 1, arbitrary: pdu(fc.constant(CMD.generic_nack), empty, statusArb, fc.constantFrom(1, 2, 3)) },
  { weight: 1, arbitrary: pdu(fc.constant(CMD.data_sm), dataSmBody, fc.constant(0)) },
  { weight: 1, arbitrary: pdu(fc.constant(respOf(CMD.data_sm)), fc.oneof(idWord.map(cstr), empty), statusArb, fc.constantFrom(2, 3, 4)) },
  { weight: 1, arbitrary: pdu(fc.constant(respOf(CMD.bind_transceiver)), fc.constant(cstr('SMSC')), statusArb, fc.constantFrom(1, 2)) },
  {
    weight: 1,
    arbitrary: pdu(
      fc.constantFrom(CMD.alert_notification, CMD.outbind, CMD.submit_sm, CMD.query_sm, CMD.replace_sm, CMD.bind_transceiver, 0x7fffffff),
      bytes(20).map((b) => Buffer.from(b)),
      fc.constant(0),
    ),
  },
  {
    weight: 1,
    arbitrary: pdu(
      fc.integer({ min: 0, max: 0xffffffff }),
      bytes(20).map((b) => Buffer.from(b)),
    ),
  },
);

/** How an encoded PDU is broken (most are not). */
const fault = fc.oneof(
  { weight: 12, arbitrary: fc.constant<[string, number]>(['none', 0]) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('truncate'), fc.integer({ min: 1, max: 40 })) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('shorten'), fc.integer({ min: 1, max: 40 })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constant('length'), fc.constantFrom(0, 1, 15, 16, 17, MAX_PDU_LENGTH, MAX_PDU_LENGTH + 1, 0xffffffff, -1, 1)),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constant('flip'), fc.integer({ min: 0, max: 1 << 16 })) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('nul'), fc.constant(0)) },
);

function encodeSpec(p: PduSpec, [kind, n]: [string, number]): Buffer {
  const whole = encodePdu(p.commandId, p.status, p.sequence, p.body);
  switch (kind) {
    case 'truncate':
      // Keeps command_length: the PDU swallows what follows.
      return whole.subarray(0, Math.max(0, whole.length - n));
    case 'shorten':
      return encodePdu(p.commandId, p.status, p.sequence, p.body.subarray(0, Math.max(0, p.body.length - n)));
    case 'length': {
      const out = Buffer.from(whole);
      out.writeUInt32BE(n === -1 || n === 1 ? (whole.length + n) >>> 0 : n >>> 0, 0);
      return out;
    }
    case 'flip': {
      const out = Buffer.from(whole);
      if (p.body.length > 0) out[16 + (n % p.body.length)]! ^= 1 << (n % 8);
      return out;
    }
    case 'nul': {
      const at = p.body.indexOf(0);
      return at < 0
        ? whole
        : encodePdu(p.commandId, p.status, p.sequence, Buffer.concat([p.body.subarray(0, at), p.body.subarray(at + 1)]));
    }
    default:
      return whole;
  }
}

const pduBytes = fc.tuple(pduSpec, fault).map(([p, f]) => encodeSpec(p, f));
const garbage = fc.oneof(
  bytes(24).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from('GET / HTTP/1.1\r\n\r\n')),
);
const streamArb = fc
  .tuple(fc.array(pduBytes, { maxLength: 8 }), fc.oneof({ weight: 6, arbitrary: empty }, { weight: 1, arbitrary: garbage }))
  .map(([ps, tail]) => new Uint8Array(Buffer.concat([...ps, tail])));

const bindOk = pdu(
  fc.constant(respOf(CMD.bind_transceiver)),
  fc.constantFrom(cstr('SMSC'), Buffer.concat([cstr('SMSC'), Buffer.from([0x02, 0x10, 0, 1, 0x34])]), cstr(''), Buffer.alloc(0)),
  fc.constant(0),
  fc.constant(1),
);
const bindReplyArb = fc
  .oneof(
    { weight: 6, arbitrary: fc.tuple(bindOk, fault).map(([p, f]) => encodeSpec(p, f)) },
    {
      weight: 1,
      arbitrary: pdu(fc.constantFrom(respOf(CMD.bind_transceiver), CMD.generic_nack), empty, statusArb, fc.constant(1)).map((p) =>
        encodeSpec(p, ['none', 0]),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(pduBytes, { maxLength: 2 }), bindOk)
        .map(([before, p]) => Buffer.concat([...before, encodeSpec(p, ['none', 0])])),
    },
    { weight: 1, arbitrary: fc.oneof(garbage, empty) },
  )
  .map((b) => new Uint8Array(b));

const REQUESTS = ['submit', 'enquire_link', 'data_sm', 'unbind'] as const;

const inputArb: fc.Arbitrary<Input> = fc.record({
  bindReply: bindReplyArb,
  stream: streamArb,
  chunks: fc.oneof(fc.constant<number[]>([1 << 20]), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 })),
  session: fc.boolean(),
  requests: fc.array(fc.constantFrom(...REQUESTS), { maxLength: 4 }),
  text: fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('', 'A@£€{', 'x'.repeat(161), 'é😀', '\ud800', 'ж'.repeat(71))),
  linger: fc.constantFrom(0, 0, 0, 3, 15),
  unbind: fc.boolean(),
  keepAlive: fc.boolean(),
  refused: fc.constantFrom(false, false, false, false, false, false, false, true),
  tls: fc.constantFrom(false, false, false, false, false, false, false, true),
  late: fc.boolean(),
});

// ------------------------------------------------------------------ reference readers

/** Frames a byte stream into PDUs, independently of PduReader; `error` when a command_length is out of range. */
function frame(b: Buffer): { pdus: { pdu: Pdu; bytes: Buffer }[]; error: boolean } {
  const pdus: { pdu: Pdu; bytes: Buffer }[] = [];
  let o = 0;
  while (b.length - o >= 16) {
    const len = b.readUInt32BE(o);
    if (len < 16 || len > MAX_PDU_LENGTH) return { pdus, error: true };
    if (b.length - o < len) break;
    const bytesOf = b.subarray(o, o + len);
    pdus.push({
      pdu: {
        commandId: b.readUInt32BE(o + 4),
        status: b.readUInt32BE(o + 8),
        sequence: b.readUInt32BE(o + 12),
        body: bytesOf.subarray(16),
      },
      bytes: bytesOf,
    });
    o += len;
  }
  return { pdus, error: false };
}

const samePdu = (a: Pdu, b: Pdu): boolean =>
  a.commandId === b.commandId && a.status === b.status && a.sequence === b.sequence && a.body.equals(b.body);

/** The chunk sizes of `input`, applied to `length` bytes: at most 24 pieces (the rest in the last). */
function pieces(length: number, sizes: readonly number[]): number[] {
  const out: number[] = [];
  let o = 0;
  for (let i = 0; o < length; i++) {
    const raw = sizes.length === 0 ? length : sizes[i % sizes.length]!;
    let n = Number.isFinite(raw) ? Math.abs(Math.trunc(raw)) : 1;
    if (n === 0) n = 1;
    if (out.length === 23) n = length - o;
    n = Math.min(n, length - o);
    out.push(n);
    o += n;
  }
  return out;
}

/** Which TLV region a reference walk finds: distinct tags and no tail (then the re-encoding is exact). */
function tlvsExact(body: Buffer, offset: number): boolean {
  const seen = new Set<number>();
  while (offset < body.length) {
    if (offset + 4 > body.length) return false;
    const tag = body.readUInt16BE(offset);
    if (seen.has(tag)) return false;
    seen.add(tag);
    offset += 4 + body.readUInt16BE(offset + 2);
  }
  return offset === body.length;
}

const MESSAGE_STATES = ['', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD'];

/** The first whitespace-separated word of `text` that starts with `key` (any case) and has more after it. */
function word(text: string, key: string): string | undefined {
  for (const w of text.split(/\s/)) if (w.length > key.length && w.slice(0, key.length).toLowerCase() === key) return w.slice(key.length);
  return undefined;
}

/** parseReceipt as its documentation reads. */
function receiptModel(sm: ShortMessage): { ids: string[]; stat: string; err: string } | undefined {
  const text = sm.shortMessage.toString('latin1');
  const ids: string[] = [];
  const tlvId = sm.tlvs.get(TAG.receipted_message_id);
  if (tlvId !== undefined) {
    const nul = tlvId.indexOf(0);
    const id = tlvId.toString('latin1', 0, nul < 0 ? tlvId.length : nul).trim();
    if (id !== '') ids.push(id);
  }
  const textId = word(text, 'id:');
  if (textId !== undefined && !ids.includes(textId)) ids.push(textId);
  if (ids.length === 0) return undefined;
  const state = sm.tlvs.get(TAG.message_state);
  const fromTlv = state?.length === 1 && state[0]! >= 1 && state[0]! <= 8 ? MESSAGE_STATES[state[0]!] : undefined;
  return { ids, stat: fromTlv ?? word(text, 'stat:')?.toUpperCase() ?? 'UNKNOWN', err: word(text, 'err:') ?? '' };
}

/** splitUdh as 3GPP TS 23.040 reads a UDH: only IEs inside it, the last concatenation IE wins. */
function udhModel(sm: Buffer): { concat: { reference: number; total: number; seq: number } | undefined; payload: Buffer } {
  const udhl = sm[0];
  if (udhl === undefined || udhl + 1 > sm.length) return { concat: undefined, payload: sm };
  let concat: { reference: number; total: number; seq: number } | undefined;
  for (let o = 1; o + 2 <= udhl + 1;) {
    const iei = sm[o]!;
    const len = sm[o + 1]!;
    if (o + 2 + len > udhl + 1) break;
    if (iei === 0x00 && len === 3) concat = { reference: sm[o + 2]!, total: sm[o + 3]!, seq: sm[o + 4]! };
    else if (iei === 0x08 && len === 4) concat = { reference: sm.readUInt16BE(o + 2), total: sm[o + 4]!, seq: sm[o + 5]! };
    o += 2 + len;
  }
  return { concat, payload: sm.subarray(udhl + 1) };
}

const GSM_CHARS = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà\f^{}\\[~]|€',
);

function checkText(dataCoding: number, payload: Buffer): void {
  const text = decodeText(dataCoding, payload);
  check(typeof text === 'string', 'decodeText returned no string');
  if (dataCoding === 0) {
    check(text.length <= payload.length, `GSM text longer than its septets: ${payload.toString('hex')}`);
    if (!payload.includes(0x1b) && !payload.some((b) => (b & 0x7f) === 0x1b)) check(text.length === payload.length, 'a septet lost');
    for (const c of text) check(GSM_CHARS.has(c), `decodeGsm gave a character outside GSM 03.38: ${JSON.stringify(c)}`);
  } else if (dataCoding === 8) {
    const even = payload.length & ~1;
    check(text.length === even / 2, 'UCS-2 text is not one code unit per two octets');
    check(Buffer.from(text, 'utf16le').swap16().equals(payload.subarray(0, even)), 'UCS-2 text does not give its bytes back');
  } else {
    check(text.length === payload.length, `data_coding ${dataCoding}: not one character per octet`);
  }
}

/** What src/dispatch/smpp.ts does with a deliver_sm's body, with the codec oracles. */
function readDeliverSm(body: Buffer): ShortMessage | undefined {
  const sm = refusesOnlyWithSync([SmppProtocolError], () => decodeShortMessage(body));
  if (sm instanceof Error) return undefined;
  // Round trip.
  const tlvs = [...sm.tlvs].map(([tag, value]) => ({ tag, value }));
  if (sm.shortMessage.length > 254) {
    const refused = refusesOnlyWithSync([RangeError], () => encodeShortMessage({ ...sm, tlvs }));
    check(refused instanceof RangeError, 'a short_message over 254 octets was encoded');
  } else {
    const re = encodeShortMessage({ ...sm, tlvs });
    const tlvLength = tlvs.reduce((n, t) => n + 4 + t.value.length, 0);
    const mandatory = re.length - tlvLength;
    check(re.subarray(0, mandatory).equals(body.subarray(0, mandatory)), `mandatory parameters not reproduced: ${body.toString('hex')}`);
    if (tlvsExact(body, mandatory)) check(re.equals(body), `body not reproduced: ${body.toString('hex')} → ${re.toString('hex')}`);
    check(isDeepStrictEqual(decodeShortMessage(re), sm), `decode(encode(decode(b))) differs: ${body.toString('hex')}`);
  }
  // The server's path: a receipt, or an inbound text.
  const type = sm.esmClass & ESM.TYPE_MASK;
  if (type === ESM.DELIVERY_RECEIPT || type === 0x20) {
    const parsed = parseReceipt(sm);
    const model = receiptModel(sm);
    check(
      isDeepStrictEqual(parsed, model),
      `parseReceipt ${JSON.stringify(parsed)} ≠ ${JSON.stringify(model)} for ${body.toString('hex')}`,
    );
    if (parsed) {
      const outcome = receiptOutcome(parsed.stat);
      const expected =
        parsed.stat === 'DELIVRD' ? 'delivered' : parsed.stat === 'ENROUTE' || parsed.stat === 'ACCEPTD' ? 'intermediate' : 'undelivered';
      check(outcome === expected, `receiptOutcome(${parsed.stat}) = ${outcome}`);
    }
  } else {
    let payload = sm.tlvs.get(TAG.message_payload) ?? sm.shortMessage;
    if (sm.esmClass & ESM.UDHI) {
      const split = splitUdh(payload);
      const model = udhModel(payload);
      check(
        isDeepStrictEqual(split.concat, model.concat),
        `splitUdh concat ${JSON.stringify(split.concat)} ≠ ${JSON.stringify(model.concat)}: ${payload.toString('hex')}`,
      );
      check(split.payload.equals(model.payload), `splitUdh payload wrong: ${payload.toString('hex')}`);
      payload = split.payload;
    }
    checkText(sm.dataCoding, payload);
  }
  return sm;
}

/** The codec oracles over the stream as chunked. */
function runCodec(stream: Buffer, sizes: readonly number[]): void {
  const reference = frame(stream);
  const reader = new PduReader();
  const got: Pdu[] = [];
  let threw = false;
  let o = 0;
  for (const n of pieces(stream.length, sizes)) {
    const res = refusesOnlyWithSync([SmppProtocolError], () => reader.push(stream.subarray(o, o + n)));
    o += n;
    if (res instanceof Error) {
      threw = true;
      break;
    }
    got.push(...res);
  }
  check(
    threw === reference.error,
    `PduReader ${threw ? 'threw' : 'did not throw'}; the reference framer ${reference.error ? 'did' : 'did not'}`,
  );
  check(got.length <= reference.pdus.length, 'PduReader returned more PDUs than the stream holds');
  if (!threw) check(got.length === reference.pdus.length, `PduReader returned ${got.length} of ${reference.pdus.length} PDUs`);
  got.forEach((p, i) => {
    const ref = reference.pdus[i]!;
    check(samePdu(p, ref.pdu), `PDU ${i} differs from the reference framing`);
    check(encodePdu(p.commandId, p.status, p.sequence, p.body).equals(ref.bytes), `encodePdu does not give PDU ${i}'s bytes back`);
  });
  for (const p of got) {
    if (p.commandId === respOf(CMD.submit_sm)) {
      const id = decodeMessageId(p.body);
      const nul = p.body.indexOf(0);
      check(id === p.body.toString('latin1', 0, nul < 0 ? p.body.length : nul), 'decodeMessageId is not the text before the NUL');
      if (p.body.length > 0)
        check(
          encodeMessageId(id).equals(Buffer.concat([p.body.subarray(0, nul < 0 ? p.body.length : nul), Buffer.alloc(1)])),
          'message_id round trip',
        );
      const name = statusName(p.status);
      const known = Object.entries(STATUS).find(([, v]) => v === p.status)?.[0];
      check(name === (known ?? `ESME_0x${p.status.toString(16).toUpperCase().padStart(8, '0')}`), `statusName(${p.status}) = ${name}`);
    } else if (p.commandId === CMD.deliver_sm) readDeliverSm(p.body);
  }
}

/** encodeText's parts, as a submit sends them, read back. */
function runText(text: string, reference: number): Buffer[] {
  const enc = encodeText(text, reference);
  const bodies = enc.parts.map((part) =>
    encodeShortMessage({
      serviceType: '',
      sourceTon: 1,
      sourceNpi: 1,
      source: '447700900001',
      destTon: 1,
      destNpi: 1,
      dest: '447700900002',
      esmClass: enc.esmClass,
      protocolId: 0,
      priority: 0,
      scheduleDeliveryTime: '',
      validityPeriod: '',
      registeredDelivery: 1,
      replaceIfPresent: 0,
      dataCoding: enc.dataCoding,
      smDefaultMsgId: 0,
      shortMessage: part,
    }),
  );
  const payloads = bodies.map((b, i) => {
    const sm = decodeShortMessage(b);
    if (enc.parts.length === 1) return sm.shortMessage;
    const split = splitUdh(sm.shortMessage);
    check(
      isDeepStrictEqual(split.concat, { reference: reference & 0xff, total: enc.parts.length, seq: i + 1 }),
      'a part has the wrong UDH',
    );
    return split.payload;
  });
  const back = decodeText(enc.dataCoding, Buffer.concat(payloads));
  // A lone surrogate has no UCS-2 form that decodes to it and back through the segmenter: compare well-formed texts only.
  if (text.isWellFormed()) check(back === text, `encodeText round trip: ${JSON.stringify(text)} → ${JSON.stringify(back)}`);
  return bodies;
}

// ------------------------------------------------------------------ the session

let server: net.Server | undefined;
let port = 0;
let closedPort = 0;
let onConnection: ((socket: net.Socket) => void) | undefined;
const escaped: unknown[] = [];
const onUncaught = (err: unknown): void => void escaped.push(err);

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function writeChunks(socket: net.Socket, data: Buffer, sizes: readonly number[]): Promise<void> {
  let o = 0;
  for (const n of pieces(data.length, sizes)) {
    if (socket.destroyed) return;
    socket.write(data.subarray(o, o + n));
    o += n;
    await tick();
  }
}

const TIMEOUT_MS = 10;
const SESSION_CMDS = new Set<number>([CMD.enquire_link, CMD.unbind, CMD.deliver_sm, CMD.data_sm]);

type Outcome = { command: number; pdu?: Pdu; err?: unknown };

async function runSession(input: Input, submitBodies: readonly Buffer[]): Promise<void> {
  const bindReply = Buffer.from(input.bindReply);
  const stream = Buffer.from(input.stream);
  const smsc = frame(Buffer.concat([bindReply, stream])).pdus.map((p) => p.pdu);
  const esmeOut: Buffer[] = [];
  let serverSocket: net.Socket | undefined;
  let bindSeen = false;
  let bindWritten: Promise<void> = Promise.resolve();
  const serverClosed = new Promise<void>((resolve) => {
    onConnection = (socket) => {
      serverSocket = socket;
      socket.on('data', (chunk: Buffer) => {
        esmeOut.push(chunk);
        if (!bindSeen) {
          bindSeen = true;
          bindWritten = writeChunks(socket, bindReply, input.chunks);
        }
      });
      socket.on('close', () => resolve());
    };
  });
  const onClose: (Error | undefined)[] = [];
  const options = {
    // With TLS, a name (sent as the servername) or the address (none sent).
    host: input.tls && input.unbind ? 'localhost' : '127.0.0.1',
    port: input.refused ? closedPort : port,
    tls: input.tls,
    systemId: 'fuzz',
    password: 'secret',
    timeoutMs: TIMEOUT_MS,
    enquireMs: input.keepAlive ? 3 : 0,
    onClose: (err: Error | undefined) => void onClose.push(err),
    onRequest: (s: SmppSession, p: Pdu) => {
      // As src/dispatch/smpp.ts onRequest answers.
      if (p.commandId !== CMD.deliver_sm) return s.respond(p, STATUS.ESME_RINVCMDID);
      const sm = readDeliverSm(p.body);
      s.respond(p, sm ? STATUS.ESME_ROK : STATUS.ESME_RSYSERR, encodeMessageId(''));
    },
  };
  let session: SmppSession | undefined;
  try {
    session = await openSession(options);
  } catch (err) {
    if (input.refused) {
      // Refused, or (a busy machine, `localhost` tried on each address) not connected within the timeout.
      const refused = err instanceof Error && (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      check(refused || err instanceof SmppTimeoutError, `connect refused: ${String(err)}`);
    } else if (input.tls) {
      const socketError = err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
      check(socketError || err instanceof SmppTimeoutError || err instanceof SmppClosedError, `TLS connect rejected with ${String(err)}`);
    } else {
      check(
        err instanceof SmppBindError || err instanceof SmppTimeoutError || err instanceof SmppClosedError,
        `openSession rejected with ${String(err)}`,
      );
      if (err instanceof SmppBindError) {
        check(
          smsc.some(
            (p) =>
              p.sequence === 1 &&
              p.status === err.status &&
              (p.commandId === respOf(CMD.bind_transceiver) || p.commandId === CMD.generic_nack),
          ),
          'SmppBindError without its response',
        );
      }
    }
  }
  const outcomes: Promise<Outcome>[] = [];
  if (session) {
    check(
      smsc.some((p) => p.sequence === 1 && p.commandId === respOf(CMD.bind_transceiver) && p.status === STATUS.ESME_ROK),
      `bound without a bind_transceiver_resp ESME_ROK #1 (SMSC sent ${JSON.stringify(smsc.filter((p) => p.sequence === 1).map((p) => [p.commandId.toString(16), p.status]))})`,
    );
    const s = session;
    const send = (command: number, body?: Buffer) =>
      outcomes.push(
        s.request(command, body).then(
          (pdu): Outcome => ({ command, pdu }),
          (err: unknown): Outcome => ({ command, err }),
        ),
      );
    for (const r of input.requests) {
      if (r === 'submit') for (const b of submitBodies.slice(0, 3)) send(CMD.submit_sm, b);
      else if (r === 'enquire_link') send(CMD.enquire_link);
      else if (r === 'data_sm') send(CMD.data_sm, Buffer.from('00010134343737000101343400000000', 'hex'));
      else send(CMD.unbind);
    }
    await bindWritten;
    if (serverSocket) await writeChunks(serverSocket, stream, input.chunks);
    const linger = Number.isFinite(input.linger) ? Math.min(Math.max(0, input.linger), 60) : 0;
    if (linger > 0) await sleep(linger);
    if (input.late) send(CMD.enquire_link);
    if (input.unbind) await session.close();
    else session.destroy(undefined);
    const closedWith = await session.closed;
    check(
      closedWith === undefined ||
        closedWith instanceof SmppClosedError ||
        closedWith instanceof SmppProtocolError ||
        (closedWith.constructor === Error && closedWith.message.startsWith('enquire_link failed:')),
      `closed with ${String(closedWith)}`,
    );
    check(!session.open && session.inFlight === 0, 'a closed session still open or holding requests');
    check(onClose.length === 1 && onClose[0] === closedWith, `onClose called ${onClose.length} times, or not with what closed resolved to`);
  }
  const settled = await Promise.all(outcomes);
  if (!input.refused && bindSeen) await Promise.race([serverClosed, sleep(500)]);
  onConnection = undefined;
  serverSocket?.destroy();

  // The ESME's side of the wire (TLS: a ClientHello, not PDUs).
  if (input.tls) return;
  const out = frame(Buffer.concat(esmeOut));
  check(
    !out.error && out.pdus.reduce((n, p) => n + p.bytes.length, 0) === Buffer.concat(esmeOut).length,
    'the ESME wrote bytes that are not PDUs',
  );
  const esme = out.pdus.map((p) => p.pdu);
  if (esme.length > 0) {
    const first = esme[0]!;
    check(
      first.commandId === CMD.bind_transceiver && first.sequence === 1 && first.body.equals(encodeBind(options)),
      'the first PDU is not bind_transceiver #1',
    );
  }
  const ownRequests = esme.filter((p) => !isResponse(p.commandId));
  ownRequests.forEach((p, i) =>
    check(i === 0 || p.sequence > ownRequests[i - 1]!.sequence, 'the ESME reused or lowered a sequence number'),
  );
  const smscRequests = smsc.filter((p) => !isResponse(p.commandId));
  let next = 0;
  for (const answer of esme.filter((p) => isResponse(p.commandId))) {
    while (smscRequests[next]?.commandId === CMD.alert_notification) next++;
    const q = smscRequests[next++];
    check(q !== undefined, `the ESME answered a request the SMSC never sent: ${answer.commandId.toString(16)} #${answer.sequence}`);
    check(answer.sequence === q.sequence, `answer #${answer.sequence} out of order (expected #${q.sequence})`);
    if (SESSION_CMDS.has(q.commandId))
      check(answer.commandId === respOf(q.commandId), `${q.commandId.toString(16)} answered with ${answer.commandId.toString(16)}`);
    else
      check(
        answer.commandId === CMD.generic_nack && answer.status === STATUS.ESME_RINVCMDID,
        `${q.commandId.toString(16)} not answered with generic_nack ESME_RINVCMDID`,
      );
    if (q.commandId === CMD.enquire_link || q.commandId === CMD.unbind)
      check(answer.status === STATUS.ESME_ROK && answer.body.length === 0, 'enquire_link/unbind answered with an error');
  }
  for (const o of settled) {
    if (o.pdu) {
      const pdu = o.pdu;
      check(
        pdu.commandId === respOf(o.command) || pdu.commandId === CMD.generic_nack,
        `request ${o.command.toString(16)} resolved with ${pdu.commandId.toString(16)}`,
      );
      check(
        smsc.some((p) => samePdu(p, pdu)),
        'a request resolved with a PDU the SMSC never sent',
      );
      check(
        ownRequests.some((p) => p.commandId === o.command && p.sequence === pdu.sequence),
        'a request resolved with another sequence number',
      );
    } else check(o.err instanceof SmppTimeoutError || o.err instanceof SmppClosedError, `request rejected with ${String(o.err)}`);
  }
}

export const target: FuzzTarget<Input> = {
  name: 'smpp',
  oracle:
    'only SmppProtocolError escapes; PduReader frames any chunking as the whole stream, encodePdu gives the bytes back; ' +
    'encodeShortMessage(decodeShortMessage(b)) = b (mandatory part always; all when TLV tags distinct, no tail); parseReceipt/splitUdh/decodeText ' +
    'as documented; the session binds only on bind_transceiver_resp ROK #1, answers every SMSC request as documented and in order, ' +
    'settles every request with its own response or SmppTimeoutError/SmppClosedError, closes with its typed errors, nothing uncaught',
  files: ['src/dispatch/smpp-codec.ts', 'src/dispatch/smpp-session.ts'],
  maxMs: 2000,
  arbitrary: inputArb,
  dictionary: [
    '\x00\x00\x00\x10',
    '\x00\x00\x00\x05',
    '\x80\x00\x00\x04',
    '\x80\x00\x00\x09',
    '\x00\x00\x00\x15',
    '\x80\x00\x00\x00',
    '\x00\x00\x00\x06',
    '\x00\x00\x01\x03',
    '\x00\x00\x00\x01',
    '\x00\x00\x00\x02',
    '\x00\x1e',
    '\x04\x24',
    '\x04\x27\x00\x01\x02',
    '\x02\x0c\x00\x02',
    '\x05\x00\x03',
    '\x06\x08\x04',
    'id:',
    ' sub:001 dlvrd:001 submit date:2401011200 done date:2401011201 ',
    'stat:DELIVRD',
    'stat:UNDELIV',
    'stat:ENROUTE',
    'err:000',
    ' text:',
    '\x1b',
    '\x00',
    '\xff\xff\xff\xff',
  ],
  async setup() {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    const listen = (s: net.Server) =>
      new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port)));
    const closed = net.createServer();
    closedPort = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    server = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.on('error', () => {});
      if (onConnection) onConnection(socket);
      else socket.destroy();
    });
    port = await listen(server);
  },
  async teardown() {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  },
  async run(input) {
    escaped.length = 0;
    const all = Buffer.concat([Buffer.from(input.bindReply), Buffer.from(input.stream)]);
    runCodec(all, input.chunks);
    const bodies = runText(input.text, all.length);
    if (input.session) await runSession(input, bodies);
    // Whatever the session scheduled (an unbind's deferred close) runs before the verdict.
    await tick();
    check(escaped.length === 0, `uncaught: ${escaped.map((e) => (e instanceof Error ? (e.stack ?? e.message) : String(e))).join('\n')}`);
  },
};

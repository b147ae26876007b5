import { SegmentedMessage } from 'sms-segments-calculator';

/**
 * SMPP 3.4 wire format (the parts msgsvc speaks): PDU framing, the bodies of bind_transceiver,
 * submit_sm, deliver_sm and their responses, TLVs, command status names, the text encodings
 * (GSM 03.38 default alphabet unpacked, one septet per octet, data_coding 0; UCS-2 as UTF-16BE,
 * data_coding 8), concatenation UDHs and delivery receipt texts.
 *
 * Source: "Short Message Peer to Peer Protocol Specification v3.4", 12-Oct-1999, Issue 1.2 —
 * §3.2 (PDU format), §4.1 (bind), §4.4 (submit_sm), §4.6 (deliver_sm), §5.1.3 (command_status),
 * §5.2.12 (esm_class), §5.2.19 (data_coding), §5.3 (TLVs), Appendix B (receipt text). UDH:
 * 3GPP TS 23.040 §9.2.3.24.1 (IEI 0x00, 8-bit reference) and .8 (IEI 0x08, 16-bit reference).
 * Pure functions over Buffers: no I/O here (smpp-session.ts owns the socket).
 */

/** command_id values (§5.1.2.1). A response is the request's id with bit 31 set. */
export const CMD = Object.freeze({
  generic_nack: 0x80000000,
  bind_receiver: 0x00000001,
  bind_transmitter: 0x00000002,
  query_sm: 0x00000003,
  submit_sm: 0x00000004,
  deliver_sm: 0x00000005,
  unbind: 0x00000006,
  replace_sm: 0x00000007,
  cancel_sm: 0x00000008,
  bind_transceiver: 0x00000009,
  outbind: 0x0000000b,
  enquire_link: 0x00000015,
  submit_multi: 0x00000021,
  alert_notification: 0x00000102,
  data_sm: 0x00000103,
});

/** The response command_id of a request command_id. */
export const respOf = (commandId: number): number => (commandId | 0x80000000) >>> 0;
/** Whether a command_id is a response (bit 31). */
export const isResponse = (commandId: number): boolean => (commandId & 0x80000000) !== 0;

/** command_status values (§5.1.3), by name. */
export const STATUS = Object.freeze({
  ESME_ROK: 0x00,
  ESME_RINVMSGLEN: 0x01,
  ESME_RINVCMDLEN: 0x02,
  ESME_RINVCMDID: 0x03,
  ESME_RINVBNDSTS: 0x04,
  ESME_RALYBND: 0x05,
  ESME_RINVPRTFLG: 0x06,
  ESME_RINVREGDLVFLG: 0x07,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RINVMSGID: 0x0c,
  ESME_RBINDFAIL: 0x0d,
  ESME_RINVPASWD: 0x0e,
  ESME_RINVSYSID: 0x0f,
  ESME_RCANCELFAIL: 0x11,
  ESME_RREPLACEFAIL: 0x13,
  ESME_RMSGQFUL: 0x14,
  ESME_RINVSERTYP: 0x15,
  ESME_RINVNUMDESTS: 0x33,
  ESME_RINVDLNAME: 0x34,
  ESME_RINVDESTFLAG: 0x40,
  ESME_RINVSUBREP: 0x42,
  ESME_RINVESMCLASS: 0x43,
  ESME_RCNTSUBDL: 0x44,
  ESME_RSUBMITFAIL: 0x45,
  ESME_RINVSRCTON: 0x48,
  ESME_RINVSRCNPI: 0x49,
  ESME_RINVDSTTON: 0x50,
  ESME_RINVDSTNPI: 0x51,
  ESME_RINVSYSTYP: 0x53,
  ESME_RINVREPFLAG: 0x54,
  ESME_RINVNUMMSGS: 0x55,
  ESME_RTHROTTLED: 0x58,
  ESME_RINVSCHED: 0x61,
  ESME_RINVEXPIRY: 0x62,
  ESME_RINVDFTMSGID: 0x63,
  ESME_RX_T_APPN: 0x64,
  ESME_RX_P_APPN: 0x65,
  ESME_RX_R_APPN: 0x66,
  ESME_RQUERYFAIL: 0x67,
  ESME_RINVOPTPARSTREAM: 0xc0,
  ESME_ROPTPARNOTALLWD: 0xc1,
  ESME_RINVPARLEN: 0xc2,
  ESME_RMISSINGOPTPARAM: 0xc3,
  ESME_RINVOPTPARAMVAL: 0xc4,
  ESME_RDELIVERYFAILURE: 0xfe,
  ESME_RUNKNOWNERR: 0xff,
});

const STATUS_NAMES = new Map<number, string>(Object.entries(STATUS).map(([k, v]) => [v, k]));

/**
 * The name of a command_status (`ESME_RTHROTTLED`), or `ESME_0x%08X` for a code the
 * specification does not name (vendor codes 0x400–0x4FF among them). This is the ErrorCode a
 * refused message gets.
 */
export function statusName(status: number): string {
  return STATUS_NAMES.get(status) ?? `ESME_0x${(status >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
}

/** TLV tags used here (§5.3.2). */
export const TAG = Object.freeze({
  receipted_message_id: 0x001e,
  sar_msg_ref_num: 0x020c,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  message_payload: 0x0424,
  message_state: 0x0427,
});

/** esm_class bits (§5.2.12). */
export const ESM = Object.freeze({
  /** Bits 2–5: message type. */
  TYPE_MASK: 0x3c,
  /** xx0001xx: SMSC delivery receipt (deliver_sm). */
  DELIVERY_RECEIPT: 0x04,
  /** x1xxxxxx: the short message starts with a UDH. */
  UDHI: 0x40,
});

/** One PDU: header fields and the raw body (mandatory parameters, then TLVs). */
export interface Pdu {
  readonly commandId: number;
  readonly status: number;
  readonly sequence: number;
  readonly body: Buffer;
}

/** Largest PDU accepted from the peer, bytes (a deliver_sm with a 64 KiB message_payload fits). */
export const MAX_PDU_LENGTH = 70_000;

/** A whole PDU on the wire: 16-byte header (length, command_id, command_status, sequence_number, all big-endian uint32) + body. */
export function encodePdu(commandId: number, status: number, sequence: number, body: Buffer = EMPTY): Buffer {
  const out = Buffer.allocUnsafe(16 + body.length);
  out.writeUInt32BE(16 + body.length, 0);
  out.writeUInt32BE(commandId >>> 0, 4);
  out.writeUInt32BE(status >>> 0, 8);
  out.writeUInt32BE(sequence >>> 0, 12);
  body.copy(out, 16);
  return out;
}

const EMPTY = Buffer.alloc(0);

/** Thrown on bytes that are not SMPP (a length out of range, a truncated body). The session drops the connection. */
export class SmppProtocolError extends Error {
  override name = 'SmppProtocolError';
}

/**
 * Splits a byte stream into PDUs. `push(chunk)` returns the PDUs completed by that chunk.
 * @throws SmppProtocolError when a command_length is below 16 or above MAX_PDU_LENGTH.
 */
export class PduReader {
  private buffer: Buffer = EMPTY;

  push(chunk: Buffer): Pdu[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: Pdu[] = [];
    let offset = 0;
    while (this.buffer.length - offset >= 16) {
      const length = this.buffer.readUInt32BE(offset);
      if (length < 16 || length > MAX_PDU_LENGTH) throw new SmppProtocolError(`command_length ${length} out of range`);
      if (this.buffer.length - offset < length) break;
      out.push({
        commandId: this.buffer.readUInt32BE(offset + 4),
        status: this.buffer.readUInt32BE(offset + 8),
        sequence: this.buffer.readUInt32BE(offset + 12),
        // A copy: the body outlives the stream's buffer.
        body: Buffer.from(this.buffer.subarray(offset + 16, offset + length)),
      });
      offset += length;
    }
    this.buffer = offset === this.buffer.length ? EMPTY : this.buffer.subarray(offset);
    return out;
  }
}

/** A C-Octet String: the ASCII bytes and a NUL. */
function cstr(value: string): Buffer {
  return Buffer.from(`${value}\0`, 'latin1');
}

/** Reads a C-Octet String at `offset`; returns the text and the offset after its NUL. */
/** The C-Octet String at `offset`, in latin1: one character per byte, so it spans its length plus the NUL. */
function readCString(body: Buffer, offset: number): string {
  const end = body.indexOf(0, offset);
  if (end < 0) throw new SmppProtocolError('C-Octet String without its NUL');
  return body.toString('latin1', offset, end);
}

/** bind_transceiver / bind_transmitter / bind_receiver body (§4.1.1). */
export interface BindParams {
  systemId: string;
  password: string;
  /** system_type, default ''. */
  systemType?: string;
}

/** The body of a bind PDU: system_id, password, system_type, interface_version 0x34, addr_ton 0, addr_npi 0, address_range ''. */
export function encodeBind(p: BindParams): Buffer {
  return Buffer.concat([cstr(p.systemId), cstr(p.password), cstr(p.systemType ?? ''), Buffer.from([0x34, 0, 0]), cstr('')]);
}

/** A TLV: tag and raw value. */
export interface Tlv {
  readonly tag: number;
  readonly value: Buffer;
}

function encodeTlvs(tlvs: readonly Tlv[]): Buffer {
  return Buffer.concat(
    tlvs.map((t) => {
      const b = Buffer.allocUnsafe(4 + t.value.length);
      b.writeUInt16BE(t.tag, 0);
      b.writeUInt16BE(t.value.length, 2);
      t.value.copy(b, 4);
      return b;
    }),
  );
}

function decodeTlvs(body: Buffer, offset: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  while (offset + 4 <= body.length) {
    const tag = body.readUInt16BE(offset);
    const length = body.readUInt16BE(offset + 2);
    if (offset + 4 + length > body.length) throw new SmppProtocolError(`TLV 0x${tag.toString(16)} overruns the PDU`);
    out.set(tag, body.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
  }
  return out;
}

/** submit_sm / deliver_sm fields (§4.4.1, §4.6.1: the two share one layout). Addresses are digits. */
export interface ShortMessage {
  serviceType: string;
  sourceTon: number;
  sourceNpi: number;
  source: string;
  destTon: number;
  destNpi: number;
  dest: string;
  esmClass: number;
  protocolId: number;
  priority: number;
  scheduleDeliveryTime: string;
  validityPeriod: string;
  registeredDelivery: number;
  replaceIfPresent: number;
  dataCoding: number;
  smDefaultMsgId: number;
  /** The short_message octets (at most 254), UDH included when esm_class has UDHI. */
  shortMessage: Buffer;
  tlvs: Map<number, Buffer>;
}

/** The body of a submit_sm (or deliver_sm). @throws RangeError when short_message is over 254 octets. */
export function encodeShortMessage(m: Omit<ShortMessage, 'tlvs'> & { tlvs?: readonly Tlv[] }): Buffer {
  if (m.shortMessage.length > 254) throw new RangeError(`short_message is ${m.shortMessage.length} octets (at most 254)`);
  return Buffer.concat([
    cstr(m.serviceType),
    Buffer.from([m.sourceTon, m.sourceNpi]),
    cstr(m.source),
    Buffer.from([m.destTon, m.destNpi]),
    cstr(m.dest),
    Buffer.from([m.esmClass, m.protocolId, m.priority]),
    cstr(m.scheduleDeliveryTime),
    cstr(m.validityPeriod),
    Buffer.from([m.registeredDelivery, m.replaceIfPresent, m.dataCoding, m.smDefaultMsgId, m.shortMessage.length]),
    m.shortMessage,
    encodeTlvs(m.tlvs ?? []),
  ]);
}

/** Decodes a submit_sm or deliver_sm body. @throws SmppProtocolError on a truncated body. */
export function decodeShortMessage(body: Buffer): ShortMessage {
  let o = 0;
  const serviceType = readCString(body, o);
  o += serviceType.length + 1;
  const sourceTon = byteAt(body, o++);
  const sourceNpi = byteAt(body, o++);
  const source = readCString(body, o);
  o += source.length + 1;
  const destTon = byteAt(body, o++);
  const destNpi = byteAt(body, o++);
  const dest = readCString(body, o);
  o += dest.length + 1;
  const esmClass = byteAt(body, o++);
  const protocolId = byteAt(body, o++);
  const priority = byteAt(body, o++);
  const scheduleDeliveryTime = readCString(body, o);
  o += scheduleDeliveryTime.length + 1;
  const validityPeriod = readCString(body, o);
  o += validityPeriod.length + 1;
  const registeredDelivery = byteAt(body, o++);
  const replaceIfPresent = byteAt(body, o++);
  const dataCoding = byteAt(body, o++);
  const smDefaultMsgId = byteAt(body, o++);
  const smLength = byteAt(body, o++);
  if (o + smLength > body.length) throw new SmppProtocolError('short_message overruns the PDU');
  const shortMessage = Buffer.from(body.subarray(o, o + smLength));
  return {
    serviceType,
    sourceTon,
    sourceNpi,
    source,
    destTon,
    destNpi,
    dest,
    esmClass,
    protocolId,
    priority,
    scheduleDeliveryTime,
    validityPeriod,
    registeredDelivery,
    replaceIfPresent,
    dataCoding,
    smDefaultMsgId,
    shortMessage,
    tlvs: decodeTlvs(body, o + smLength),
  };
}

function byteAt(body: Buffer, offset: number): number {
  const b = body[offset];
  if (b === undefined) throw new SmppProtocolError('PDU body too short');
  return b;
}

/** message_id of a submit_sm_resp (empty when the response carries an error and no body). */
export function decodeMessageId(body: Buffer): string {
  if (body.length === 0) return '';
  const end = body.indexOf(0);
  return body.toString('latin1', 0, end < 0 ? body.length : end);
}

/** The body of a submit_sm_resp / deliver_sm_resp: message_id as a C-Octet String (deliver_sm_resp: always ''). */
export function encodeMessageId(id: string): Buffer {
  return cstr(id);
}

// ------------------------------------------------------------------ text

/** GSM 03.38 default alphabet, septet → character (0x1B is the escape). */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** GSM 03.38 extension table: septet after 0x1B → character. */
const GSM_EXTENSION: Record<number, string> = {
  0x0a: '\f',
  0x14: '^',
  0x28: '{',
  0x29: '}',
  0x2f: '\\',
  0x3c: '[',
  0x3d: '~',
  0x3e: ']',
  0x40: '|',
  0x65: '€',
};

/**
 * Decodes GSM 03.38 septets stored one per octet (data_coding 0 as msgsvc and most SMSCs use it).
 * An unknown escape gives the basic character; a lone trailing escape gives a space.
 */
export function decodeGsm(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]! & 0x7f;
    if (b === 0x1b) {
      const next = bytes[i + 1];
      if (next === undefined) {
        out += ' ';
        break;
      }
      i++;
      out += GSM_EXTENSION[next & 0x7f] ?? GSM_BASIC[next & 0x7f];
    } else out += GSM_BASIC[b];
  }
  return out;
}

/** UCS-2 / UTF-16BE bytes → string (an odd last byte is dropped). */
export function decodeUcs2(bytes: Buffer): string {
  const even = bytes.length & ~1;
  const swapped = Buffer.from(bytes.subarray(0, even));
  swapped.swap16();
  return swapped.toString('utf16le');
}

/** A text's short_message bodies for submit_sm. */
export interface EncodedText {
  encoding: 'GSM-7' | 'UCS-2';
  /** data_coding: 0 (SMSC default alphabet = GSM 03.38, unpacked) or 8 (UCS-2). */
  dataCoding: 0 | 8;
  /** esm_class for every part: 0, or 0x40 (UDHI) when there is more than one. */
  esmClass: number;
  /** Each part's short_message, the 6-octet UDH first when there is more than one. */
  parts: Buffer[];
}

/**
 * Encodes a text for submit_sm and splits it as API.md §11.1 counts it (src/domain/segments.ts:
 * the same library decides the encoding and where each segment ends, so the parts sent are the
 * segments charged). GSM-7 goes as data_coding 0 with one septet per octet (unpacked; an extension
 * character is 0x1B and its code): 160 per single part, 153 per part of a long text. UCS-2 goes as
 * data_coding 8, UTF-16BE: 70 units, 67 per part. A long text's parts start with the UDH
 * `05 00 03 ref total seq` (3GPP TS 23.040 IEI 0x00, 8-bit reference).
 * @param reference the concatenation reference (0–255) shared by the parts.
 */
export function encodeText(text: string, reference: number): EncodedText {
  const m = new SegmentedMessage(text, 'auto', false);
  const encoding = m.encodingName;
  const bodies: Buffer[] = [];
  for (const segment of m.segments) {
    const units: number[] = [];
    for (const c of segment as unknown[]) {
      const codeUnits = (c as { codeUnits?: number[] }).codeUnits;
      if (codeUnits) units.push(...codeUnits);
    }
    if (encoding === 'GSM-7') bodies.push(Buffer.from(units));
    else {
      const b = Buffer.allocUnsafe(units.length * 2);
      units.forEach((u, i) => b.writeUInt16BE(u, i * 2));
      bodies.push(b);
    }
  }
  if (bodies.length === 0) bodies.push(Buffer.alloc(0));
  const total = bodies.length;
  const parts =
    total === 1 ? bodies : bodies.map((b, i) => Buffer.concat([Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, i + 1]), b]));
  return { encoding, dataCoding: encoding === 'GSM-7' ? 0 : 8, esmClass: total === 1 ? 0 : ESM.UDHI, parts };
}

/** A concatenation header's fields (3GPP TS 23.040 IEI 0x00 or 0x08). */
export interface Concatenation {
  reference: number;
  total: number;
  /** 1-based. */
  seq: number;
}

/**
 * Splits a short_message that starts with a UDH (esm_class UDHI) into its concatenation info
 * (when it has one) and the text bytes after the header.
 */
export function splitUdh(sm: Buffer): { concat: Concatenation | undefined; payload: Buffer } {
  const udhl = sm[0];
  if (udhl === undefined || udhl + 1 > sm.length) return { concat: undefined, payload: sm };
  let concat: Concatenation | undefined;
  let o = 1;
  while (o + 2 <= udhl + 1) {
    const iei = sm[o]!;
    const len = sm[o + 1]!;
    // An element must lie within the header: one that overruns it is malformed, and the rest with it.
    if (o + 2 + len > udhl + 1) break;
    const v = sm.subarray(o + 2, o + 2 + len);
    if (iei === 0x00 && len === 3) concat = { reference: v[0]!, total: v[1]!, seq: v[2]! };
    else if (iei === 0x08 && len === 4) concat = { reference: v.readUInt16BE(0), total: v[2]!, seq: v[3]! };
    o += 2 + len;
  }
  return { concat, payload: sm.subarray(udhl + 1) };
}

/** Decodes a deliver_sm text by data_coding: 0 GSM 03.38 unpacked, 1 IA5/ASCII, 3 Latin-1, 8 UCS-2; anything else as Latin-1. */
export function decodeText(dataCoding: number, bytes: Buffer): string {
  if (dataCoding === 0) return decodeGsm(bytes);
  if (dataCoding === 8) return decodeUcs2(bytes);
  if (dataCoding === 1) return bytes.toString('ascii');
  return bytes.toString('latin1');
}

// ------------------------------------------------------------------ receipts

/** message_state values (§5.2.28) → the receipt text's `stat:` word (Appendix B). */
const MESSAGE_STATES: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

/** A delivery receipt read from a deliver_sm (esm_class receipt). */
export interface ParsedReceipt {
  /** The ids it names: receipted_message_id TLV first, then the text's `id:` (deduplicated). */
  ids: string[];
  /** `DELIVRD`, `UNDELIV`, … (message_state TLV if present, else the text's `stat:`). */
  stat: string;
  /** The text's `err:` (e.g. `000`), '' when absent. */
  err: string;
}

/**
 * Reads a receipt deliver_sm: ids from the receipted_message_id TLV (a C-Octet String) and from
 * the `id:` of the text (`id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done
 * date:YYMMDDhhmm stat:DDDDDDD err:E text:…`, Appendix B), state from the message_state TLV or the
 * text's `stat:`. Returns undefined when it names no id.
 */
export function parseReceipt(sm: ShortMessage): ParsedReceipt | undefined {
  const text = sm.shortMessage.toString('latin1');
  const ids: string[] = [];
  const tlvId = sm.tlvs.get(TAG.receipted_message_id);
  if (tlvId && tlvId.length > 0) {
    const end = tlvId.indexOf(0);
    const id = tlvId.toString('latin1', 0, end < 0 ? tlvId.length : end).trim();
    if (id) ids.push(id);
  }
  const textId = /(?:^|\s)id:(\S+)/i.exec(text)?.[1];
  if (textId && !ids.includes(textId)) ids.push(textId);
  if (ids.length === 0) return undefined;
  const stateTlv = sm.tlvs.get(TAG.message_state);
  const stat =
    (stateTlv && stateTlv.length === 1 ? MESSAGE_STATES[stateTlv[0]!] : undefined) ??
    /(?:^|\s)stat:(\S+)/i.exec(text)?.[1]?.toUpperCase() ??
    'UNKNOWN';
  const err = /(?:^|\s)err:(\S+)/i.exec(text)?.[1] ?? '';
  return { ids, stat, err };
}

/** Whether a receipt state is final and Delivered (`DELIVRD`), final and not delivered, or intermediate (ENROUTE, ACCEPTD). */
export function receiptOutcome(stat: string): 'delivered' | 'undelivered' | 'intermediate' {
  if (stat === 'DELIVRD') return 'delivered';
  if (stat === 'ENROUTE' || stat === 'ACCEPTD') return 'intermediate';
  return 'undelivered';
}

/**
 * The second factor and passkeys (docs/API.md §15.3, §15.4): the TOTP and recovery codes
 * `confirmTwoFactor` and `disableTwoFactor` read, and the WebAuthn assertion `signInWithPasskey`
 * reads, called as the console's session routes call them.
 *
 * The target holds a real person with two-factor on, ten known recovery codes and a passkey whose
 * P-256 key it holds, so it can make assertions the server must accept and then break them one
 * field at a time (client data type, challenge, origin, RP ID hash, flags, counter, credential id,
 * signature), or send any JSON at all in their place.
 *
 * Oracle: only the documented `ValidationFailedError` and the lockout's 429 escape; a code is
 * accepted exactly when it is a TOTP code of the current step or the one either side, later than
 * the last step used (no replay), or one of the unused recovery codes (any case, with or without
 * the dash); a passkey sign-in succeeds only when every checked part is right and the signature is
 * the key's own over exactly what was sent, and an untouched assertion always succeeds.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import * as OTPAuth from 'otpauth';
import { HttpStatusError, ValidationFailedError } from '../../src/domain/errors.ts';
import { confirmTwoFactor, disableTwoFactor, passkeySignInOptions, signInWithPasskey, type SignInDeps } from '../../src/domain/sign-in.ts';
import { hashToken } from '../../src/domain/tokens.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import * as users from '../../src/store/repositories/users.ts';
import { buildTestApp, type TestApp } from '../../test/helpers/app.ts';
import { check, refusesOnlyWith, type FuzzTarget } from '../target.ts';

type CodeInput = { kind: 'code'; how: string; offset: number; lastOffset: number; pick: number; raw: string; pad: string };
type PasskeyInput = {
  kind: 'passkey';
  type: string;
  challenge: string;
  origin: string;
  rpId: string;
  flags: number;
  counter: number;
  stored: number;
  id: string;
  signature: string;
  garbage: Uint8Array;
  extra: string;
  raw: string;
};
type Input = CodeInput | PasskeyInput;

const RP_ID = 'console.example';
const ORIGIN = 'https://console.example';
const RECOVERY = Array.from({ length: 10 }, (_, i) => `rcv${i}a-b${i}c9z`);

let t: TestApp | undefined;
let clock: ManualClock;
let deps: SignInDeps;
let userId = 0;
let secret = '';
let key: KeyObject;
let credentialId = '';
let passkeyRowId = 0;
let ip = 0;

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');

/** The COSE form of a P-256 public key (RFC 9053: kty 2, alg -7, crv 1, x, y). */
function coseKey(jwk: { x?: string; y?: string }): Buffer {
  const x = Buffer.from(jwk.x!, 'base64url');
  const y = Buffer.from(jwk.y!, 'base64url');
  return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
}

const codeInput: fc.Arbitrary<CodeInput> = fc.record({
  kind: fc.constant('code' as const),
  how: fc.constantFrom('totp', 'recovery', 'raw'),
  offset: fc.integer({ min: -3, max: 3 }),
  lastOffset: fc.integer({ min: -3, max: 3 }),
  pick: fc.integer({ min: 0, max: 9 }),
  raw: fc.oneof(
    fc.stringMatching(/^[0-9]{0,8}$/),
    fc.string({ maxLength: 14 }),
    fc.constantFrom('000000', ' 123456 ', '１２３４５６', '12345６'),
  ),
  pad: fc.constantFrom('', '', ' ', '\t', '-', 'x', '0', '\u00a0'),
});
const passkeyInput: fc.Arbitrary<PasskeyInput> = fc.record({
  kind: fc.constant('passkey' as const),
  type: fc.constantFrom('webauthn.get', 'webauthn.get', 'webauthn.create', 'WebAuthn.get', ''),
  challenge: fc.constantFrom('right', 'right', 'other', 'padded', 'missing'),
  origin: fc.constantFrom(ORIGIN, ORIGIN, 'https://evil.example', 'http://console.example', `${ORIGIN}/`, `${ORIGIN}:443`),
  rpId: fc.constantFrom(RP_ID, RP_ID, 'evil.example', 'CONSOLE.EXAMPLE', `${RP_ID}.`),
  flags: fc.constantFrom(0x01, 0x05, 0x00, 0x04, 0x41, 0x81, 0x1d, 0xff),
  counter: fc.integer({ min: 0, max: 12 }),
  stored: fc.integer({ min: 0, max: 10 }),
  id: fc.constantFrom('right', 'right', 'unknown', 'empty', 'number'),
  signature: fc.constantFrom('valid', 'valid', 'garbage', 'empty', 'flipped'),
  garbage: fc.uint8Array({ maxLength: 80 }),
  extra: fc.constantFrom('', '', ',"crossOrigin":true', ',"tokenBinding":{"status":"present"}', ',"challenge":"x"', ',"z":1'),
  raw: fc.oneof(fc.constant(''), fc.json({ maxDepth: 3 })),
});

async function runCode(input: CodeInput): Promise<void> {
  const nowMs = clock.nowMs();
  const step = Math.floor(nowMs / 30_000);
  const lastStep = step + input.lastOffset;
  await users.updateUser(
    t!.store.db,
    userId,
    { totp_secret: secret, totp_pending: secret, two_factor: 1, totp_last_step: lastStep },
    undefined,
  );
  await users.replaceRecoveryCodes(
    t!.store.db,
    userId,
    RECOVERY.map((c) => hashToken(c.replace('-', ''))),
  );
  const totp = new OTPAuth.TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) });
  const code =
    input.how === 'totp'
      ? totp.generate({ timestamp: nowMs + input.offset * 30_000 }) + input.pad
      : input.how === 'recovery'
        ? (input.pick % 2 ? RECOVERY[input.pick]!.toUpperCase() : RECOVERY[input.pick]!.replace('-', '')) + input.pad
        : input.raw;
  const trimmed = code.trim();
  // What must be accepted: a code of a step within one of now and after the last one used…
  const steps = [-1, 0, 1].map((d) => step + d).filter((s) => s > lastStep);
  const totpOk = /^\d{6}$/.test(trimmed) && steps.some((s) => totp.generate({ timestamp: s * 30_000 }) === trimmed);
  // …or an unused recovery code, in any case, with or without its dash.
  const recoveryOk =
    /^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(trimmed) && RECOVERY.some((c) => c.replace('-', '') === trimmed.toLowerCase().replace('-', ''));
  const off = await refusesOnlyWith([ValidationFailedError], () => disableTwoFactor(deps, userId, { Code: code }));
  check(
    !(off instanceof Error) === (totpOk || recoveryOk),
    `disable with ${JSON.stringify(code)}: ${off instanceof Error ? 'refused' : 'accepted'}`,
  );
  if (!(off instanceof Error) && recoveryOk && !totpOk) {
    // A recovery code is used up: the same again is refused.
    await users.updateUser(t!.store.db, userId, { totp_secret: secret, two_factor: 1 }, undefined);
    const again = await refusesOnlyWith([ValidationFailedError], () => disableTwoFactor(deps, userId, { Code: code }));
    check(again instanceof Error, 'a recovery code worked twice');
  }
  await users.updateUser(
    t!.store.db,
    userId,
    { totp_secret: null, totp_pending: secret, two_factor: 0, totp_last_step: lastStep },
    undefined,
  );
  const on = await refusesOnlyWith([ValidationFailedError], () => confirmTwoFactor(deps, userId, { Code: code }));
  check(!(on instanceof Error) === totpOk, `confirm with ${JSON.stringify(code)}: ${on instanceof Error ? 'refused' : 'accepted'}`);
}

/** `v` as an integer in 0…max (a mutated number may be anything). */
const int = (v: number, max: number): number => (Number.isFinite(v) ? Math.abs(Math.trunc(v)) % (max + 1) : 0);

/** The JSON a raw input holds, or the text itself (mutation breaks JSON, and a string is a body too). */
function parsedOrText(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

async function runPasskey(input: PasskeyInput): Promise<void> {
  clock.advance(16 * 60_000); // past the lockout's window, so each input is judged on its own
  await t!.store.db.updateTable('passkeys').set({ counter: input.stored }).where('id', '=', passkeyRowId).execute();
  const { ChallengeId, Options } = await passkeySignInOptions(deps);
  const issued = (Options as { challenge: string }).challenge;
  const challenge = { right: issued, other: b64u(randomBytes(32)), padded: `${issued}=`, missing: '' }[input.challenge] ?? issued;
  const clientData = Buffer.from(
    `{"type":${JSON.stringify(input.type)},"challenge":${JSON.stringify(challenge)},"origin":${JSON.stringify(input.origin)}${input.extra}}`,
  );
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(input.counter);
  const authData = Buffer.concat([createHash('sha256').update(input.rpId).digest(), Buffer.from([input.flags & 0xff]), counter]);
  const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
  const valid = sign('sha256', signed, key);
  const signature =
    {
      valid,
      garbage: Buffer.from(input.garbage),
      empty: Buffer.alloc(0),
      flipped: Buffer.from(valid.map((b, i) => (i === 10 ? b ^ 1 : b))),
    }[input.signature] ?? valid;
  const id = { right: credentialId, unknown: b64u(randomBytes(16)), empty: '', number: 7 }[input.id] ?? credentialId;
  const response =
    input.raw !== ''
      ? parsedOrText(input.raw)
      : {
          id,
          rawId: id,
          type: 'public-key',
          response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature) },
          clientExtensionResults: {},
        };
  const who = { ip: `10.0.${(ip >> 8) & 255}.${ip++ & 255}`, requestId: 'fuzz' };
  const result = await refusesOnlyWith([ValidationFailedError, HttpStatusError], () =>
    signInWithPasskey(deps, who, { ChallengeId, Passkey: response }),
  );
  const pristine =
    input.raw === '' &&
    input.type === 'webauthn.get' &&
    input.challenge === 'right' &&
    input.origin === ORIGIN &&
    input.rpId === RP_ID &&
    (input.flags === 0x01 || input.flags === 0x05) &&
    (input.counter > input.stored || (input.counter === 0 && input.stored === 0)) &&
    input.id === 'right' &&
    input.signature === 'valid' &&
    (input.extra === '' || input.extra === ',"z":1');
  if (!(result instanceof Error)) {
    check(
      input.raw === '' &&
        input.type === 'webauthn.get' &&
        input.challenge === 'right' &&
        input.origin === ORIGIN &&
        input.rpId === RP_ID &&
        (input.flags & 0x01) === 1 &&
        input.id === 'right' &&
        input.signature === 'valid',
      `a broken assertion signed in: ${JSON.stringify({ ...input, garbage: undefined })}`,
    );
  } else {
    check(!pristine, `a right assertion was refused: ${result.message} ${JSON.stringify({ ...input, garbage: undefined })}`);
  }
}

export const target: FuzzTarget<Input> = {
  name: 'second-factor',
  oracle:
    'only the 422/429 escape; a code is accepted exactly when it is a current unused TOTP step or an unused recovery code; a passkey signs in only when every part is right and signed, and always when untouched',
  files: ['src/domain/sign-in.ts'],
  maxMs: 2000,
  arbitrary: fc.oneof(codeInput, passkeyInput),
  dictionary: ['webauthn.get', ORIGIN, RP_ID, '"', '{', '}', '-', '0', '9'],
  async setup() {
    clock = createManualClock(Date.UTC(2026, 10, 28) + 7_000);
    t = await buildTestApp(undefined, {}, { clock });
    const { account } = await t.seed('fuzz');
    deps = { store: t.store, clock, rpId: RP_ID, origin: ORIGIN };
    userId = await users.insertUser(t.store.db, {
      accountId: account.id,
      email: 'fuzz@example.com',
      name: 'Fuzz',
      role: 'owner',
      inviteHash: hashToken(randomBytes(8).toString('hex')),
      inviteExpiresAt: 0,
      now: clock.nowSeconds(),
    });
    secret = new OTPAuth.Secret({ size: 20 }).base32;
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    key = pair.privateKey;
    credentialId = b64u(randomBytes(16));
    passkeyRowId = await users.insertPasskey(t.store.db, {
      userId,
      credentialId,
      publicKey: b64u(coseKey(pair.publicKey.export({ format: 'jwk' }))),
      counter: 0,
      transports: '[]',
      name: 'fuzz',
      now: clock.nowSeconds(),
    });
  },
  async teardown() {
    await t?.close();
  },
  async run(input) {
    // Mutation changes leaves only, so the shape stays; numbers are brought back into range.
    if ('signature' in input) {
      const known = (v: string, set: readonly string[]) => (set.includes(v) ? v : set[0]!);
      await runPasskey({
        ...input,
        challenge: known(input.challenge, ['right', 'other', 'padded', 'missing']),
        id: known(input.id, ['right', 'unknown', 'empty', 'number']),
        signature: known(input.signature, ['valid', 'garbage', 'empty', 'flipped']),
        counter: int(input.counter, 0xffffffff),
        stored: int(input.stored, 1000),
        flags: int(input.flags, 255),
      });
    } else {
      await runCode({
        ...input,
        offset: int(input.offset + 3, 6) - 3,
        lastOffset: int(input.lastOffset + 3, 6) - 3,
        pick: int(input.pick, 9),
      });
    }
  },
};

/**
 * docs/API.md §14.1 (several carriers and routing): MSGSVC_CARRIERS, MSGSVC_ROUTES and
 * MSGSVC_PUBLIC_URL parsed (src/lib/carrier-settings.ts), and the rule and carriers chosen per
 * message (src/carriers/config.ts), the latter checked against a brute-force oracle. No error
 * message ever repeats a password or token, in any spelling.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { runCli } from '../helpers/cli.ts';
import {
  candidates,
  CarrierSettingError,
  chooseRule,
  createRouter,
  noRouteCode,
  parseCarriers,
  parsePublicUrl,
  parseRoutes,
  type CarrierSpec,
  type MessageType,
  type RouteRule,
} from '../../src/carriers/config.ts';

const SANDBOX_ONLY = { carrier: 'sandbox' } as const;

/** The message of what `f` throws; fails when it returns or throws anything but a CarrierSettingError. */
function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof CarrierSettingError, `a CarrierSettingError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected a CarrierSettingError');
}

const carriers = (value: string) => parseCarriers(value, SANDBOX_ONLY);

test('MSGSVC_CARRIERS: every scheme, with its defaults', () => {
  const list = carriers(
    ' tw=twilio://AC123:tok%40en@API.Twilio.com , sw=twilio://PID:t@sw.example.com/api/laml/ ,fake=twilio+http://AC1:t@127.0.0.1:9000,' +
      'phone=android://sms:pa%3Ass@192.168.1.5:8080?number=%2B15550100001&key=k-1_x,cloud=android+https://u:p@api.sms-gate.app/3rdparty/v1?key=a%2Bb&number=447700900123,' +
      'smsc=smpp://sys:pw@smsc.example.com,tls=smpps://sys:pw@[::1]:3550,demo=sandbox:',
  );
  assert.ok(Object.isFrozen(list) && list.every((c) => Object.isFrozen(c)));
  assert.deepEqual(list, [
    {
      kind: 'twilio',
      name: 'tw',
      rate: 10,
      window: 10,
      display: 'twilio://api.twilio.com',
      baseUrl: 'https://api.twilio.com',
      supportsMms: true,
      accountSid: 'AC123',
      authToken: 'tok@en',
    },
    {
      kind: 'twilio',
      name: 'sw',
      rate: 10,
      window: 10,
      display: 'twilio://sw.example.com/api/laml',
      baseUrl: 'https://sw.example.com/api/laml',
      supportsMms: true,
      accountSid: 'PID',
      authToken: 't',
    },
    {
      kind: 'twilio',
      name: 'fake',
      rate: 10,
      window: 10,
      display: 'twilio+http://127.0.0.1:9000',
      baseUrl: 'http://127.0.0.1:9000',
      supportsMms: true,
      accountSid: 'AC1',
      authToken: 't',
    },
    {
      kind: 'android',
      name: 'phone',
      rate: 10,
      window: 10,
      display: 'android://192.168.1.5:8080',
      baseUrl: 'http://192.168.1.5:8080',
      supportsMms: false,
      username: 'sms',
      password: 'pa:ss',
      number: '15550100001',
      key: 'k-1_x',
    },
    {
      kind: 'android',
      name: 'cloud',
      rate: 10,
      window: 10,
      display: 'android+https://api.sms-gate.app/3rdparty/v1',
      baseUrl: 'https://api.sms-gate.app/3rdparty/v1',
      supportsMms: false,
      username: 'u',
      password: 'p',
      number: '447700900123',
      key: 'a+b',
    },
    {
      kind: 'smpp',
      name: 'smsc',
      rate: 100,
      window: 10,
      supportsMms: false,
      display: 'smpp://smsc.example.com:2775',
      url: 'smpp://sys:pw@smsc.example.com',
      smpp: { tls: false, host: 'smsc.example.com', port: 2775, systemId: 'sys', password: 'pw' },
    },
    {
      kind: 'smpp',
      name: 'tls',
      rate: 100,
      window: 10,
      supportsMms: false,
      display: 'smpps://[::1]:3550',
      url: 'smpps://sys:pw@[::1]:3550',
      smpp: { tls: true, host: '::1', port: 3550, systemId: 'sys', password: 'pw' },
    },
    { kind: 'sandbox', name: 'demo', rate: undefined, window: 100, supportsMms: true, display: 'sandbox' },
  ]);
});

test('MSGSVC_CARRIERS: rate and window on any URL, within their bounds', () => {
  const [tw, sm, sb, sb2] = carriers(
    'tw=twilio://a:b@h?rate=100000&window=1000,sm=smpp://u:p@h:1?window=1&rate=1,sb=sandbox:?rate=5&window=10000,sb2=sandbox:',
  );
  assert.deepEqual(
    [tw!.rate, tw!.window, sm!.rate, sm!.window, sb!.rate, sb!.window, sb2!.rate, sb2!.window],
    [100000, 1000, 1, 1, 5, 10000, undefined, 100],
  );
  assert.equal((sm as Extract<CarrierSpec, { kind: 'smpp' }>).url, 'smpp://u:p@h:1', 'the query is not handed to the SMPP carrier');
  // A listed sandbox takes its window from MSGSVC_SANDBOX_WINDOW, as the single sandbox does.
  assert.equal(parseCarriers('s=sandbox:', { carrier: 'sandbox', sandboxWindow: 7 })[0]!.window, 7);
  for (const [q, re] of [
    ['rate=0', /rate must be a whole number from 1 to 100000, got "0"/],
    ['rate=100001', /rate must be a whole number from 1 to 100000, got "100001"/],
    ['rate=1.5', /rate must be/],
    ['rate=-1', /rate must be/],
    ['rate=', /rate must be/],
    ['rate=1e3', /rate must be/],
    ['window=1001', /window must be a whole number from 1 to 1000/],
    ['window=0', /window must be/],
    ['rate=1&rate=2', /rate is given twice/],
    ['Rate=1', /unknown query parameter "Rate"; only rate and window are allowed/],
    ['timeout=5', /unknown query parameter "timeout"/],
  ] as const) {
    assert.match(
      errorOf(() => carriers(`x=twilio://a:b@h?${q}`)),
      new RegExp(`^MSGSVC_CARRIERS entry 1 \\(x=twilio://…\\): ${re.source}`),
    );
  }
  assert.match(
    errorOf(() => carriers('s=sandbox:?window=10001')),
    /entry 1 \(s=sandbox:…\): window must be a whole number from 1 to 10000/,
  );
});

test('MSGSVC_CARRIERS: an Android phone needs ?number= and ?key=, whose values no error repeats', () => {
  const [ph] = carriers('ph=android://u:p@10.0.0.2:8080?number=%2B447700900123&key=Zq-sEcReT_k3y%2B&window=3');
  assert.ok(ph?.kind === 'android');
  assert.deepEqual([ph.number, ph.key, ph.window], ['447700900123', 'Zq-sEcReT_k3y+', 3]);
  const label = /^MSGSVC_CARRIERS entry 1 \(ph=android:\/\/…\)/;
  for (const [q, re] of [
    ['key=Zq-sEcReT', / needs \?number= \(the phone's own number/],
    ['number=15550100001', / needs \?key= \(the app's webhook signing key\)/],
    ['', / needs \?number=/],
    ['number=+15550100001&key=Zq-sEcReT', /: number must be the phone's own number, 3 to 15 digits \(write a leading \+ as %2B\)/],
    ['number=12&key=Zq-sEcReT', /: number must be/],
    ['number=1555010000112345&key=Zq-sEcReT', /: number must be/],
    ['number=15550100001&key=', /: key must be the app's webhook signing key/],
    ['number=15550100001&key=Zq-sEcReT&key=Zq-sEcReT2', /: key is given twice/],
    ['number=15550100001&key=Zq-sEcReT&bogus=1', /: unknown query parameter "bogus"; only rate, window, number and key are allowed/],
  ] as const) {
    const message = errorOf(() => carriers(`ph=android://u:p@10.0.0.2:8080?${q}`));
    assert.match(message, new RegExp(label.source + re.source), q);
    assert.ok(!message.includes('Zq-sEcReT'), `the key is not repeated: ${message}`);
  }
  // number and key belong to Android entries only.
  assert.match(
    errorOf(() => carriers('t=twilio://a:b@h?number=15550100001')),
    /unknown query parameter "number"; only rate and window are allowed/,
  );
});

test('MSGSVC_CARRIERS unset or blank: the single-carrier settings, unchanged', () => {
  for (const value of [undefined, '', '   ']) {
    assert.deepEqual(parseCarriers(value, SANDBOX_ONLY), [
      { kind: 'sandbox', name: 'sandbox', rate: undefined, window: 100, supportsMms: true, display: 'sandbox' },
    ]);
  }
  const legacy = { carrier: 'smpp', smppUrl: 'smpp://sys:p%40ss@smsc:2776', smppRate: 250, smppWindow: 20, sandboxWindow: 3 } as const;
  assert.deepEqual(parseCarriers(undefined, legacy), [
    {
      kind: 'smpp',
      name: 'smpp',
      rate: 250,
      window: 20,
      supportsMms: false,
      display: 'smpp://smsc:2776',
      url: 'smpp://sys:p%40ss@smsc:2776',
      smpp: { tls: false, host: 'smsc', port: 2776, systemId: 'sys', password: 'p@ss' },
    },
  ]);
  // MSGSVC_CARRIER=sandbox wins over a URL that is set (config.ts decides; the sandbox it is).
  assert.deepEqual(
    parseCarriers('', { carrier: 'sandbox', smppUrl: 'smpp://u:p@h', sandboxWindow: 3 }).map((c) => [c.name, c.kind, c.window]),
    [['sandbox', 'sandbox', 3]],
  );
});

test('MSGSVC_CARRIERS beside MSGSVC_SMPP_URL or MSGSVC_CARRIER is refused, naming both', () => {
  const msg = errorOf(() => parseCarriers('a=sandbox:', { carrier: 'smpp', smppUrl: 'smpp://sys:hunter2@h' }));
  assert.match(msg, /^MSGSVC_CARRIERS and MSGSVC_SMPP_URL are both set/);
  assert.ok(!msg.includes('hunter2'));
  assert.match(
    errorOf(() => parseCarriers('a=sandbox:', { carrier: 'sandbox', carrierSetting: 'sandbox' })),
    /^MSGSVC_CARRIERS and MSGSVC_CARRIER are both set/,
  );
  // Blank old settings are unset ones.
  assert.equal(parseCarriers('a=sandbox:', { carrier: 'sandbox', smppUrl: ' ', carrierSetting: '' }).length, 1);
});

test('MSGSVC_CARRIERS: each bad entry is named, by position, then name and scheme', () => {
  const cases: [string, RegExp][] = [
    ['a=sandbox:,,b=sandbox:', /^MSGSVC_CARRIERS entry 2 is empty/],
    ['a=sandbox:,', /^MSGSVC_CARRIERS entry 2 is empty/],
    ['sandbox:', /^MSGSVC_CARRIERS entry 1 is not name=URL/],
    ['A=sandbox:', /^MSGSVC_CARRIERS entry 1: the name before = must be 1 to 32 of a-z, 0-9, _ and -/],
    ['=sandbox:', /^MSGSVC_CARRIERS entry 1: the name/],
    [`${'a'.repeat(33)}=sandbox:`, /^MSGSVC_CARRIERS entry 1: the name/],
    ['a.b=sandbox:', /^MSGSVC_CARRIERS entry 1: the name/],
    ['a=sandbox:,b=sandbox:,a=sandbox:', /^MSGSVC_CARRIERS entry 3: the name a is already used by an earlier entry/],
    [
      'a=http://u:p@h',
      /^MSGSVC_CARRIERS entry 1 \(a\): unknown URL scheme; use smpp:\/\/, smpps:\/\/, twilio:\/\/, twilio\+http:\/\/, android:\/\/, android\+https:\/\/ or sandbox:/,
    ],
    ['a=twilio', /^MSGSVC_CARRIERS entry 1 \(a\): unknown URL scheme/],
    ['a=', /^MSGSVC_CARRIERS entry 1 \(a\): unknown URL scheme/],
    ['a=sandbox://host', /^MSGSVC_CARRIERS entry 1 \(a=sandbox:…\): sandbox: takes no host, user or path/],
    ['a=sandbox:x', /sandbox: takes no host/],
    ['a=twilio:a:b@h', /^MSGSVC_CARRIERS entry 1 \(a=twilio:\/\/…\) must be twilio:\/\/… with a host/],
    ['a=twilio://h', /^MSGSVC_CARRIERS entry 1 \(a=twilio:\/\/…\) needs SID:TOKEN@ before the host/],
    ['a=twilio://sid@h', /needs SID:TOKEN@/],
    ['a=twilio://:tok@h', /needs SID:TOKEN@/],
    ['a=android://u@h:8080', /^MSGSVC_CARRIERS entry 1 \(a=android:\/\/…\) needs user:password@ before the host/],
    ['a=twilio://a:b@', /^MSGSVC_CARRIERS entry 1 \(a=twilio:\/\/…\) is not a valid URL/],
    ['a=twilio://a:b@h st', /is not a valid URL/],
    ['a=twilio://a:b@h:99999', /is not a valid URL/],
    ['a=twilio://a:b@h:0', /the port must be from 1 to 65535/],
    ['a=twilio+http://a:b@h', /^MSGSVC_CARRIERS entry 1 \(a=twilio\+http:\/\/…\) needs a port \(host:port\)/],
    ['a=android://a:b@h', /^MSGSVC_CARRIERS entry 1 \(a=android:\/\/…\) needs a port/],
    ['a=twilio://a:b@h#x', /has a #: write # in a password as %23/],
    ['a=twilio://a:%zz@h', /the SID or TOKEN is not valid percent-encoding/],
    ['a=smpp://u:%zz@h', /^MSGSVC_CARRIERS entry 1 \(a=smpp:\/\/…\) has a system_id or password that is not valid percent-encoding/],
    ['a=smpp://u:p@h/path', /^MSGSVC_CARRIERS entry 1 \(a=smpp:\/\/…\) takes no path/],
    ['a=smpp://u:123456789@h', /^MSGSVC_CARRIERS entry 1 \(a=smpp:\/\/…\) has a password longer than 8 characters/],
    ['a=smpps://:p@h', /^MSGSVC_CARRIERS entry 1 \(a=smpps:\/\/…\) has no system_id/],
    ['a=twilio://a:b@h,b=twilio://x:y@h?z=1', /^MSGSVC_CARRIERS entry 2 \(b=twilio:\/\/…\): unknown query parameter "z"/],
    // A name that could be a piece of a password with a raw ? or & in it is not shown.
    [
      'a=twilio://a:b@h?b&cd@host',
      /^MSGSVC_CARRIERS entry 1 \(a=twilio:\/\/…\) has an @ after its \?: percent-encode \? in a user or password as %3F$/,
    ],
    ['a=twilio://a:b@h?rate=1&c%40d', /unknown query parameter \(not shown\); only rate and window are allowed/],
    ['a=twilio://a:b@h?0123456789abcdef0123456789abcdef=', /unknown query parameter \(not shown\)/],
    ['a=twilio://a:b@h?rate=s3cr3t', /rate must be a whole number from 1 to 100000$/],
  ];
  for (const [value, re] of cases)
    assert.match(
      errorOf(() => carriers(value)),
      re,
      value,
    );
});

/** Every spelling of `secret` that an error message must not contain. */
function spellings(secret: string): string[] {
  const enc = encodeURIComponent(secret);
  return [...new Set([secret, enc, enc.toLowerCase(), encodeURI(secret), JSON.stringify(secret).slice(1, -1)])];
}

/** Bad entries carrying `secret` as password or token, raw (`r`) and percent-encoded (`e`). */
function badEntries(r: string, e: string): string[] {
  return [
    `x=twilio://SID:${r}@host`,
    `x=twilio://SID:${r}`,
    `x=twilio://SID:${e}`,
    `x=twilio+http://SID:${e}@host`,
    `x=twilio://SID:${e}@host?bogus=1`,
    `x=twilio://SID:${e}@host?rate=abc`,
    `x=twilio://SID:${e}@host?rate=${e}`,
    `x=twilio://SID:${r}@host?rate=1`,
    `x=twilio://SID:${r}&z@host:1?rate=1`,
    `x=twilio://SID:a@h?${r}@host`,
    `x=twilio://SID:a@h?b&${r}@host`,
    `x=twilio://SID:${e}@host#frag`,
    `x=twilio://SID:${e}@`,
    `x=twilio://SID:${e}@ho st`,
    `x=twilio://SID:${e}@host:0`,
    `x=twilio://SID:${e}%zz@host`,
    `x=twilio://${e}:${e}@host:99999`,
    `x=android://u:${e}@host`,
    `x=android://u:${r}@host:8080/`,
    `x=smpp://u:${e}@host`,
    `x=smpp://u:${r}@host`,
    `x=smpp://u:${e}@host/path`,
    `x=smpp://${e}:${e}@host?window=0`,
    `x=bogus://u:${e}@host`,
    `twilio://SID:${e}@host`,
    `twilio://SID:${r}@host`,
    r,
    `${r}=sandbox:`,
    `x=sandbox:${r}`,
    `a=sandbox:,a=twilio://SID:${e}@host`,
    `a=twilio://SID:${e}@host,${r}`,
  ];
}

test('no error message repeats a password or token: examples with odd characters, escapes and @', () => {
  for (const secret of [
    'p@ss%40w:rd',
    'a%2Cb,c',
    'tok/en?x#y',
    '%zz%',
    'pa ss@@word',
    'ünï©ødé-tøken',
    'abc=def&rate=1',
    'AC:TOKEN@host',
  ]) {
    for (const entry of badEntries(secret, encodeURIComponent(secret))) {
      let message: string;
      try {
        carriers(entry);
        continue; // a raw secret can happen to make a valid URL; nothing to check then
      } catch (err) {
        assert.ok(err instanceof CarrierSettingError, `${entry}: ${String(err)}`);
        message = err.message;
      }
      for (const s of spellings(secret)) assert.ok(!message.includes(s), `${entry}: ${message}`);
      assert.match(message, /^MSGSVC_CARRIERS /);
    }
  }
});

test('no error message repeats a password or token (property)', () => {
  // Spread by code point, so that no lone surrogate (which no environment variable can hold) is made.
  const odd = fc.constantFrom(...[...'@%:/?#,=&;+ !*\'"()[]{}<>\\^`|~é€😀'], '%40', '%2', '%zz', '%25');
  const secret = fc
    .tuple(fc.stringMatching(/^[A-Za-z0-9]{6}$/), fc.array(fc.oneof(odd, fc.stringMatching(/^[A-Za-z0-9]{1,3}$/)), { maxLength: 8 }))
    .map(([core, rest]) => `Zq${core}${rest.join('')}`);
  fc.assert(
    fc.property(secret, (s) => {
      const enc = encodeURIComponent(s);
      for (const entry of badEntries(s, enc)) {
        try {
          carriers(entry);
        } catch (err) {
          if (!(err instanceof CarrierSettingError)) return false;
          // The secret's distinctive start (Zq + 6) is in every spelling of it.
          if (err.message.includes(s.slice(0, 8))) return false;
          for (const sp of spellings(s)) if (err.message.includes(sp)) return false;
        }
      }
      // And a well-formed URL gives the secret back, exactly.
      const [tw, ph] = carriers(`t=twilio://${enc}:${enc}@host,p=android://${enc}:${enc}@host:8080?number=15550100001&key=k`);
      return (
        tw?.kind === 'twilio' &&
        tw.accountSid === s &&
        tw.authToken === s &&
        ph?.kind === 'android' &&
        ph.username === s &&
        ph.password === s
      );
    }),
    { numRuns: 300 },
  );
});

const CAR = carriers('tw=twilio://a:b@h,sm=smpp://u:p@h,ph=android://u:p@h:8080?number=15550100001&key=k,sb=sandbox:');

test('MSGSVC_ROUTES: unset or blank is one rule, * to every carrier in list order', () => {
  for (const value of [undefined, '', '  ']) {
    const rules = parseRoutes(value, CAR);
    assert.deepEqual(rules, [{ match: '*', type: undefined, prefix: '', carriers: ['tw', 'sm', 'ph', 'sb'] }]);
    assert.ok(Object.isFrozen(rules) && Object.isFrozen(rules[0]) && Object.isFrozen(rules[0]!.carriers));
  }
});

test('MSGSVC_ROUTES: the grammar', () => {
  assert.deepEqual(parseRoutes(' 44 = sm > tw ; sms:1415=ph;mms:*=tw>sb; *=sb ; 44123456789012=tw;mms:44=sm;sms:*=sm', CAR), [
    { match: '44', type: undefined, prefix: '44', carriers: ['sm', 'tw'] },
    { match: 'sms:1415', type: 'sms', prefix: '1415', carriers: ['ph'] },
    { match: 'mms:*', type: 'mms', prefix: '', carriers: ['tw', 'sb'] },
    { match: '*', type: undefined, prefix: '', carriers: ['sb'] },
    { match: '44123456789012', type: undefined, prefix: '44123456789012', carriers: ['tw'] },
    { match: 'mms:44', type: 'mms', prefix: '44', carriers: ['sm'] },
    { match: 'sms:*', type: 'sms', prefix: '', carriers: ['sm'] },
  ]);
});

test('MSGSVC_ROUTES: each bad rule is named', () => {
  const cases: [string, RegExp][] = [
    ['44=nope', /^MSGSVC_ROUTES rule 1 \(44\) names the carrier "nope", which is not in MSGSVC_CARRIERS \(tw, sm, ph, sb\)/],
    ['*=tw;44=sm>Nope', /^MSGSVC_ROUTES rule 2 \(44\) names the carrier "Nope", which is not/],
    ['44=', /^MSGSVC_ROUTES rule 1 \(44\) has an empty carrier name/],
    ['44=tw>>sm', /has an empty carrier name/],
    ['44=tw>', /has an empty carrier name/],
    ['44=tw>tw', /^MSGSVC_ROUTES rule 1 \(44\) names the carrier tw twice/],
    ['44=tw;44=sm', /^MSGSVC_ROUTES rule 2 \(44\): MATCH 44 is already rule 1/],
    ['mms:*=tw; mms:* =sb', /^MSGSVC_ROUTES rule 2 \(mms:\*\): MATCH mms:\* is already rule 1/],
    ['+44=tw', /^MSGSVC_ROUTES rule 1 \("\+44"\) has a bad MATCH: write the prefix as digits without \+/],
    ['sms:+1=tw', /bad MATCH: write the prefix as digits without \+/],
    ['44*=tw', /^MSGSVC_ROUTES rule 1 \("44\*"\) has a bad MATCH: MATCH is \* or 1 to 15 digits, optionally after sms: or mms:/],
    ['4 4=tw', /^MSGSVC_ROUTES rule 1 has a bad MATCH/],
    ['SMS:44=tw', /rule 1 \("SMS:44"\) has a bad MATCH/],
    ['sms:=tw', /rule 1 \("sms:"\) has a bad MATCH/],
    ['fax:44=tw', /has a bad MATCH/],
    ['=tw', /^MSGSVC_ROUTES rule 1 has a bad MATCH/],
    ['1234567890123456=tw', /has a bad MATCH/],
    ['44=tw;;*=sb', /^MSGSVC_ROUTES rule 2 is empty/],
    ['44=tw;', /^MSGSVC_ROUTES rule 2 is empty/],
    ['44', /^MSGSVC_ROUTES rule 1 is not MATCH=name\[>name…\]/],
  ];
  for (const [value, re] of cases)
    assert.match(
      errorOf(() => parseRoutes(value, CAR)),
      re,
      value,
    );
  // Both an untyped and a typed rule of one prefix, and an MMS rule whose carriers take no MMS, are allowed.
  assert.equal(parseRoutes('44=tw;sms:44=sm;mms:44=ph', CAR).length, 3);
});

test('chooseRule: longest prefix of the type or of none, a typed rule winning a tie', () => {
  const rules = parseRoutes('*=sb;44=sm;447=ph;mms:44=tw;sms:447=sm;1415=tw;mms:*=tw', CAR);
  const pick = (digits: string, type: MessageType) => chooseRule(rules, digits, type)?.match;
  assert.equal(pick('447700900123', 'sms'), 'sms:447');
  assert.equal(pick('447700900123', 'mms'), '447');
  assert.equal(pick('441234', 'mms'), 'mms:44');
  assert.equal(pick('441234', 'sms'), '44');
  assert.equal(pick('14155550100', 'sms'), '1415');
  assert.equal(pick('33612345678', 'sms'), '*');
  assert.equal(pick('33612345678', 'mms'), 'mms:*');
  assert.equal(pick('44', 'sms'), '44', 'a prefix as long as the number matches');
  assert.equal(pick('4', 'sms'), '*');
  assert.equal(pick('', 'sms'), '*');
  assert.equal(chooseRule(parseRoutes('44=sm;mms:1=tw', CAR), '1555', 'sms'), undefined, 'no rule: NO_ROUTE');
  // A mutable list is read afresh (only frozen ones are cached).
  const mutable: RouteRule[] = [{ match: '1', type: undefined, prefix: '1', carriers: ['sm'] }];
  assert.equal(chooseRule(mutable, '15', 'sms')?.match, '1');
  mutable.push({ match: '15', type: undefined, prefix: '15', carriers: ['tw'] });
  assert.equal(chooseRule(mutable, '15', 'sms')?.match, '15');
});

test("candidates: the rule's carriers that take the type, in order; empty is NO_ROUTE / NO_MMS_ROUTE", () => {
  const rules = parseRoutes('*=sm>tw>ph>sb;44=sm>ph;mms:1=tw', CAR);
  assert.deepEqual(candidates(rules[0]!, 'sms', CAR), ['sm', 'tw', 'ph', 'sb']);
  assert.deepEqual(candidates(rules[0]!, 'mms', CAR), ['tw', 'sb']);
  assert.deepEqual(candidates(rules[1]!, 'mms', CAR), []);
  assert.deepEqual(candidates(rules[1]!, 'sms', CAR.slice(1, 2)), ['sm'], 'unknown names are left out');
  const router = createRouter(rules, CAR);
  assert.deepEqual(router.route('4420', 'mms'), { rule: rules[1], carriers: [], errorCode: 'NO_MMS_ROUTE' });
  assert.deepEqual(router.route('4420', 'sms'), { rule: rules[1], carriers: ['sm', 'ph'], errorCode: 'NO_ROUTE' });
  assert.deepEqual(router.route('1555', 'mms'), { rule: rules[2], carriers: ['tw'], errorCode: 'NO_MMS_ROUTE' });
  assert.equal(router.route('1555', 'mms'), router.route('1555', 'mms'), 'precomputed: the same object each time');
  const none = createRouter(parseRoutes('44=sm', CAR), CAR);
  assert.deepEqual(none.route('1555', 'sms'), { rule: undefined, carriers: [], errorCode: 'NO_ROUTE' });
  assert.deepEqual(none.route('1555', 'mms'), { rule: undefined, carriers: [], errorCode: 'NO_MMS_ROUTE' });
  assert.deepEqual([noRouteCode('sms'), noRouteCode('mms')], ['NO_ROUTE', 'NO_MMS_ROUTE']);
});

/** The rule API.md §14.1 names, by brute force: every rule that applies, longest prefix first, typed first at equal length. */
function oracle(rules: readonly RouteRule[], digits: string, type: MessageType): RouteRule | undefined {
  const applicable = rules.filter((r) => (r.type === undefined || r.type === type) && digits.startsWith(r.prefix));
  applicable.sort((a, b) => b.prefix.length - a.prefix.length || (a.type ? 0 : 1) - (b.type ? 0 : 1));
  return applicable[0];
}

test('chooseRule and the router agree with a brute-force oracle (property)', () => {
  const digit = fc.constantFrom('1', '4', '7');
  const prefix = fc.oneof(
    fc.constant('*'),
    fc.array(digit, { minLength: 1, maxLength: 5 }).map((d) => d.join('')),
  );
  const match = fc.tuple(fc.constantFrom('', 'sms:', 'mms:'), prefix).map(([t, p]) => t + p);
  const names = CAR.map((c) => c.name);
  const rule = fc.tuple(match, fc.shuffledSubarray(names, { minLength: 1 }));
  const rulesText = fc
    .uniqueArray(rule, { selector: (r) => r[0], minLength: 1, maxLength: 12 })
    .map((rs) => rs.map(([m, n]) => `${m}=${n.join('>')}`).join(';'));
  const recipient = fc.array(digit, { maxLength: 8 }).map((d) => d.join(''));
  fc.assert(
    fc.property(
      rulesText,
      fc.array(fc.tuple(recipient, fc.constantFrom<MessageType>('sms', 'mms')), { minLength: 1, maxLength: 20 }),
      (text, messages) => {
        const rules = parseRoutes(text, CAR);
        const router = createRouter(rules, CAR);
        for (const [digits, type] of messages) {
          const expected = oracle(rules, digits, type);
          if (chooseRule(rules, digits, type) !== expected) return false;
          const route = router.route(digits, type);
          if (route.rule !== expected) return false;
          const want = expected ? expected.carriers.filter((n) => type === 'sms' || CAR.find((c) => c.name === n)!.supportsMms) : [];
          if (JSON.stringify(route.carriers) !== JSON.stringify(want)) return false;
          if (route.errorCode !== noRouteCode(type)) return false;
        }
        return true;
      },
    ),
    { numRuns: 500 },
  );
});

test('the router is cheap per message', () => {
  const rules = parseRoutes(
    Array.from({ length: 200 }, (_, i) => `${1000 + i}=tw`)
      .concat('*=sm', 'mms:44=sb', '44=ph', '4420=tw')
      .join(';'),
    CAR,
  );
  const router = createRouter(rules, CAR);
  const start = performance.now();
  let n = 0;
  for (let i = 0; i < 200_000; i++)
    n += router.route(i % 2 ? '447700900123' : `1${100 + (i % 300)}5550100`, i % 3 ? 'sms' : 'mms').carriers.length;
  const ms = performance.now() - start;
  assert.ok(n > 0);
  assert.ok(ms < 2000, `200,000 routes took ${ms.toFixed(0)} ms`); // about 30 ms on a laptop; the bound only catches a pathology
});

test('MSGSVC_PUBLIC_URL: an absolute http(s) base URL, normalised, trailing / dropped', () => {
  assert.equal(parsePublicUrl('https://sms.example.com/', []), 'https://sms.example.com');
  assert.equal(parsePublicUrl(' HTTPS://SMS.Example.com:443/msgsvc// ', []), 'https://sms.example.com/msgsvc');
  assert.equal(parsePublicUrl('http://127.0.0.1:8080', []), 'http://127.0.0.1:8080');
  assert.equal(parsePublicUrl('http://[::1]:8080/a/b/', []), 'http://[::1]:8080/a/b');
  assert.equal(parsePublicUrl(undefined, []), undefined);
  assert.equal(parsePublicUrl('  ', carriers('s=smpp://u:p@h,b=sandbox:')), undefined, 'not needed by SMPP or the sandbox');
  for (const [value, re] of [
    ['ftp://h/', /^MSGSVC_PUBLIC_URL must be an absolute http:\/\/ or https:\/\/ URL$/],
    ['/relative', /must be an absolute/],
    ['sms.example.com', /must be an absolute/],
    ['https://h/?a=1', /^MSGSVC_PUBLIC_URL must have no query/],
    ['https://h/?', /must have no query/],
    ['https://h/#x', /^MSGSVC_PUBLIC_URL must have no fragment/],
    ['https://h/#', /must have no fragment/],
    [`https://h/${'a'.repeat(2000)}`, /must be at most 2000 characters/],
  ] as const) {
    assert.match(
      errorOf(() => parsePublicUrl(value, [])),
      re,
      value,
    );
  }
  const msg = errorOf(() => parsePublicUrl('https://user:s3cr%40t@h/', []));
  assert.equal(msg, 'MSGSVC_PUBLIC_URL must not carry a user or password');
  assert.match(
    errorOf(() => parsePublicUrl('', carriers('s=sandbox:,tw=twilio://a:b@h'))),
    /^MSGSVC_PUBLIC_URL is required by the carrier tw \(twilio\)/,
  );
  assert.match(
    errorOf(() => parsePublicUrl(undefined, carriers('ph=android://a:b@h:8080?number=15550100001&key=k'))),
    /^MSGSVC_PUBLIC_URL is required by the carrier ph \(android\)/,
  );
});

/** The message of the ConfigError `f` throws; fails when it returns or throws anything else. */
function configErrorOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `a ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('no ConfigError');
}

test('a Twilio entry at a literal private address stops the start unless MSGSVC_CARRIER_ALLOW_PRIVATE (docs/API.md §14.1)', () => {
  const base = { MSGSVC_PUBLIC_URL: 'https://sms.example.com' };
  for (const host of ['127.0.0.1:9000', '10.1.2.3:80', '[::1]:8080', '169.254.169.254:80', '0.0.0.0:9', '[::ffff:192.168.0.1]:80']) {
    const env = { ...base, MSGSVC_CARRIERS: `sms=sandbox:,fake=twilio+http://AC1:s3cr3t-t0ken@${host}` };
    const message = configErrorOf(() => loadConfig(env));
    assert.match(
      message,
      /^MSGSVC_CARRIERS entry fake \(twilio\+http:\/\/.+\): .+ is a loopback, private, link-local or unspecified address/,
      host,
    );
    assert.match(message, /HTTP_ADDRESS_NOT_ALLOWED.*set MSGSVC_CARRIER_ALLOW_PRIVATE=1 to allow it/, host);
    assert.ok(!message.includes('s3cr3t') && !message.includes('AC1'), `no secret in ${message}`);
    const allowed = loadConfig({ ...env, MSGSVC_CARRIER_ALLOW_PRIVATE: '1' });
    assert.equal(allowed.carriers[1]!.name, 'fake', 'allowed with the setting');
  }
  // A public literal, a name (it may resolve elsewhere later: checked at each connection) and an
  // Android phone on a LAN (always allowed) all start.
  for (const entry of [
    't=twilio://AC1:t@93.184.216.34',
    't=twilio+http://AC1:t@localhost:9000',
    'p=android://u:p@192.168.1.5:8080?number=15550100001&key=k',
  ])
    assert.equal(loadConfig({ ...base, MSGSVC_CARRIERS: entry }).carriers.length, 1, entry);
});

test('msgsvc serve with that entry exits 2 (a configuration error) at once and says why, without the token', async () => {
  const r = await runCli(['serve', '--port', '0'], {
    MSGSVC_CARRIERS: 'fake=twilio+http://AC1:s3cr3t-t0ken@127.0.0.1:9',
    MSGSVC_PUBLIC_URL: 'https://sms.example.com',
    DATABASE_URL: ':memory:',
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /MSGSVC_CARRIERS entry fake \(twilio\+http:\/\/127\.0\.0\.1:9\).*MSGSVC_CARRIER_ALLOW_PRIVATE=1/);
  assert.ok(!r.stderr.includes('s3cr3t') && !r.stdout.includes('s3cr3t'));
});

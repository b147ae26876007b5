import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard of API.md §12.5: a webhook `Url` whose host is or resolves to a loopback,
 * private, link-local or unspecified address is refused (`Url is invalid.`), unless the operator
 * sets MSGSVC_WEBHOOK_ALLOW_PRIVATE=1. The check is made when a webhook is written AND again at
 * each attempt, at connect time (`guardedLookup`, the socket's own DNS lookup), so a name that
 * resolves to 127.0.0.1 only later (DNS rebinding) is still refused; redirects are never followed.
 *
 * IPv4, IPv6 and the IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`) are all judged by the address they reach.
 */

const V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (shared address space)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata 169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  V4.addSubnet(net, prefix, 'ipv4');

const V6 = new BlockList();
V6.addAddress('::', 'ipv6'); // unspecified
V6.addAddress('::1', 'ipv6'); // loopback
for (const [net, prefix] of [
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still private)
  ['ff00::', 8], // multicast
] as const)
  V6.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (mapped, compatible or NAT64), if any. */
function embeddedV4(v6: string): string | undefined {
  const groups = expandV6(v6);
  if (!groups) return undefined;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6) && (groups[6] !== 0 || groups[7]! > 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !compatible && !nat64) return undefined;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

/** The 8 groups of an IPv6 address (a dotted IPv4 tail included), or undefined. */
function expandV6(address: string): number[] | undefined {
  let a = address.toLowerCase();
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) {
    const p = dotted[1]!.split('.').map(Number);
    a = a.slice(0, -dotted[1]!.length) + `${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - h.length - t.length;
  if (tail === undefined && missing !== 0) return undefined;
  const all = [...h, ...Array.from({ length: Math.max(0, missing) }, () => '0'), ...t].map((g) => parseInt(g, 16));
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : undefined;
}

/**
 * True when `address` (an IP literal, IPv6 with or without brackets) is loopback, private,
 * link-local, unspecified, multicast or reserved: not a public address of the internet.
 */
export function isForbiddenAddress(address: string): boolean {
  const a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(a.split('%')[0]!);
  if (family === 4) return V4.check(a, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(a);
    if (v4 !== undefined) return V4.check(v4, 'ipv4');
    return V6.check(a.split('%')[0]!, 'ipv6');
  }
  return true; // not an address at all: refuse
}

/** The error a refused address gives (LastError `address not allowed`). */
export class ForbiddenAddressError extends Error {
  readonly code = 'EWEBHOOKFORBIDDEN';
  constructor(readonly address: string) {
    super(`webhook address not allowed: ${address}`);
  }
}

/**
 * A `lookup` for http.request / net.connect: resolves as dns.lookup does, and fails with
 * ForbiddenAddressError when any address the name resolves to is forbidden (unless `allowPrivate`).
 * Node calls it when it opens the socket, so the check is the one the connection uses.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean; hints?: number },
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const family = options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : Number(options.family ?? 0);
    dnsLookup(hostname, { family, all: true, ...(options.hints !== undefined ? { hints: options.hints } : {}) }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '', 0);
      const bad = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(new ForbiddenAddressError(bad.address), options.all ? [] : '', 0);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The write-time check of a URL's host (API.md §12): false when the host is a forbidden
 * literal, or a name any of whose addresses is forbidden. A name that does not resolve (now) is
 * not refused here; its attempts will fail and be retried.
 */
export async function hostAllowed(hostname: string, allowPrivate: boolean): Promise<boolean> {
  if (allowPrivate) return true;
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return !isForbiddenAddress(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  // A resolver that does not answer within 3 s counts as "does not resolve now" (the attempts check again).
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), 3000);
    dnsLookup(host, { all: true }, (err, a) => {
      clearTimeout(timer);
      resolve(err ? [] : a);
    });
  });
  return !addresses.some((a) => isForbiddenAddress(a.address));
}

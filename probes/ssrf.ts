import { BlockList, isIP } from 'node:net';

/**
 * Why an address may not be reached from Plaza. `metadata` and `reserved` are never reachable;
 * the others only when private targets are allowed (development and tests).
 */
export type BlockedReason = 'loopback' | 'private' | 'link-local' | 'cgnat' | 'metadata' | 'reserved';

/**
 * An outbound request was refused by the SSRF guard; the message says which rule. The message is
 * shown to whoever listed the URL (the public listing's `last_probe.error`), so it never holds an
 * address a host name resolved to: that is `address`, for the server's log only.
 */
export class SsrfError extends Error {
  readonly reason: BlockedReason | 'scheme' | 'redirects' | 'dns' | 'size';
  /** The refused address a host name resolved to (not shown: it would map internal names to addresses). */
  readonly address: string | undefined;

  constructor(message: string, reason: SsrfError['reason'], address?: string) {
    super(message);
    this.name = 'SsrfError';
    this.reason = reason;
    this.address = address;
  }
}

const ranges: [BlockedReason, string, number, 'ipv4' | 'ipv6'][] = [
  ['reserved', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['cgnat', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['reserved', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['private', '64:ff9b:1::', 48, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001::', 32, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', 'fec0::', 10, 'ipv6'],
  ['reserved', 'ff00::', 8, 'ipv6'],
];

const lists = new Map<BlockedReason, BlockList>();
for (const [reason, network, prefix, family] of ranges) {
  let list = lists.get(reason);
  if (!list) lists.set(reason, (list = new BlockList()));
  list.addSubnet(network, prefix, family);
}

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted quad split). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parts = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries to an IPv4 host, if any: IPv4-compatible (`::a.b.c.d`),
 * -mapped (`::ffff:a.b.c.d`), -translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`, which a
 * NAT64 gateway forwards into the IPv4 network) and 6to4 (`2002:aabb:ccdd::`).
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 4) && ((g[4] === 0 && (g[5] === 0 || g[5] === 0xffff)) || (g[4] === 0xffff && g[5] === 0)))
    return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return undefined;
}

/** Classifies an IP address: the reason it is blocked, or undefined for a public address. */
export function classifyAddress(address: string): BlockedReason | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  if (METADATA.has(bare.toLowerCase())) return 'metadata';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== undefined && v4 !== '0.0.0.1') return classifyAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [reason, list] of lists) if (list.check(bare, type)) return reason;
  return undefined;
}

/** True when `reason` may be reached with private targets allowed (never metadata or reserved). */
function allowedWhenPrivate(reason: BlockedReason): boolean {
  return reason === 'loopback' || reason === 'private' || reason === 'link-local' || reason === 'cgnat';
}

/**
 * Throws SsrfError unless `address` may be connected to. `allowPrivate` lets loopback, private,
 * link-local and CGNAT through (development only); cloud metadata and reserved ranges never pass.
 */
export function assertAddressAllowed(address: string, allowPrivate: boolean, host = address): void {
  const reason = classifyAddress(address);
  if (reason === undefined) return;
  if (allowPrivate && allowedWhenPrivate(reason)) return;
  const what =
    reason === 'metadata'
      ? 'a cloud metadata address'
      : reason === 'reserved'
        ? 'a reserved address'
        : `a ${reason} address`;
  const hint = allowedWhenPrivate(reason)
    ? ' Only a server run for development allows such targets (its operator sets PLAZA_ALLOW_PRIVATE_TARGETS=1).'
    : '';
  if (host === address) throw new SsrfError(`Refused to connect to ${address}: it is ${what}.${hint}`, reason);
  throw new SsrfError(`Refused to connect to ${host}: it resolves to ${what}.${hint}`, reason, address);
}

/** Throws SsrfError unless `url` uses http or https. */
export function assertHttpUrl(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SsrfError(`Refused ${url.protocol.replace(':', '')} URL: only http and https are allowed.`, 'scheme');
  }
}

/**
 * Checks a URL that can be judged without DNS: its scheme, an IP literal host, and `localhost`
 * names. Used to reject listings early; the connect-time check stays authoritative.
 */
export function assertUrlLiterallyAllowed(url: URL, allowPrivate: boolean): void {
  assertHttpUrl(url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) assertAddressAllowed(host, allowPrivate);
  else if (/(^|\.)localhost\.?$/i.test(host)) assertAddressAllowed('127.0.0.1', allowPrivate, host);
}

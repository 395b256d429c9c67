import { isIPv6 } from 'node:net';

/** The parts of a request the client address is read from (an Express request fits). */
export interface ClientAddressSource {
  socket: { remoteAddress?: string | undefined };
  /** The address Express derived from `X-Forwarded-For` under its `trust proxy` setting. */
  ip?: string | undefined;
}

/**
 * The key a client is limited by: the socket's peer address, or the forwarded address when Plaza
 * runs behind a trusted proxy. IPv4-mapped IPv6 becomes plain IPv4, and IPv6 is cut to its /64
 * (one subscriber usually owns a whole /64, so per-address keys would be trivially evaded).
 */
export function clientAddress(req: ClientAddressSource, trustProxy: boolean): string {
  const raw = (trustProxy ? req.ip : undefined) ?? req.socket.remoteAddress ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(raw);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(raw)) return raw;
  return `${ipv6Prefix64(raw)}::/64`;
}

function ipv6Prefix64(address: string): string {
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':');
}

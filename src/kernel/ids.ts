import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** Lower-case Crockford base32 of `bytes` random bytes: URL-safe, unambiguous, no padding. */
export function randomToken(bytes = 16): string {
  const buf = randomBytes(bytes);
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}

/**
 * A new identifier `<prefix>_<time><random>`: sortable by creation time (48-bit ms timestamp in
 * front, like a ULID) and unguessable (80 random bits).
 */
export function newId(prefix: string, now: number = Date.now()): string {
  const time = now.toString(32).padStart(10, '0');
  return `${prefix}_${time}${randomToken(10)}`;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** True when a caller-supplied request id is safe to echo back and log. */
export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}

let pool = Buffer.alloc(0);
let poolAt = 0;

/**
 * A new request id: `req_` and 16 base32 characters (80 random bits). The random bytes come from
 * a 4 KiB pool refilled from the CSPRNG (one call per 512 ids, as crypto.randomUUID does), since
 * every request takes one.
 */
export function newRequestId(): string {
  if (poolAt + 10 > pool.length) {
    pool = randomBytes(4_096);
    poolAt = 0;
  }
  let out = 'req_';
  for (let i = 0; i < 2; i++) {
    // 5 bytes -> 8 characters.
    let value = 0;
    for (let j = 0; j < 5; j++) value = value * 256 + pool[poolAt++]!;
    for (let k = 7; k >= 0; k--) out += CROCKFORD[Math.floor(value / 32 ** k) % 32];
  }
  return out;
}

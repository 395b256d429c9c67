import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

let pool = Buffer.alloc(0);
let poolAt = 0;

/**
 * `n` bytes from the CSPRNG through a 4 KiB pool refilled at once (as crypto.randomUUID does):
 * ids are taken on every request and every tools/call, and a call into the CSPRNG each time
 * showed in the gateway's profile. Each byte is handed out once.
 */
function pooledRandom(n: number): Buffer {
  if (n > 256) return randomBytes(n);
  if (poolAt + n > pool.length) {
    pool = randomBytes(4_096);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

/** Lower-case Crockford base32 of `bytes` random bytes: URL-safe, unambiguous, no padding. */
export function randomToken(bytes = 16): string {
  const buf = pooledRandom(bytes);
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

/** A new request id: `req_` and 16 base32 characters (80 random bits), every request takes one. */
export function newRequestId(): string {
  return `req_${randomToken(10)}`;
}

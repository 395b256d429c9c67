import { randomBytes } from 'node:crypto';

import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId } from '../kernel/index.ts';

const PURPOSE = 'gateway-session';

/**
 * The 32-byte key that seals gateway session ids, shared by every instance through the
 * `signing_keys` table (an `oct` JWK). Instances racing to create it converge on the oldest row.
 */
export async function gatewaySessionKey(prisma: PrismaClient, clock: Clock): Promise<Buffer> {
  const find = () => prisma.signingKey.findFirst({ where: { purpose: PURPOSE, retiredAt: null }, orderBy: [{ createdAt: 'asc' }, { kid: 'asc' }] });
  let row = await find();
  if (!row) {
    await prisma.signingKey.create({
      data: { kid: newId('gsk', clock.now()), purpose: PURPOSE, publicJwk: {}, privateJwk: { kty: 'oct', k: randomBytes(32).toString('base64url') }, createdAt: new Date(clock.now()) },
    });
    row = await find();
  }
  const k = (row?.privateJwk as { k?: unknown } | null)?.k;
  if (typeof k !== 'string') throw new Error('gateway session key is missing or malformed');
  const key = Buffer.from(k, 'base64url');
  if (key.length !== 32) throw new Error('gateway session key must be 32 bytes');
  return key;
}

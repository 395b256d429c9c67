import { randomBytes } from 'node:crypto';

import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId } from '../kernel/index.ts';

const PURPOSE = 'gateway-session';

/**
 * The 32-byte key that seals gateway session ids, shared by every instance through the
 * `signing_keys` table (an `oct` JWK). It is created under a transaction-scoped advisory lock,
 * only if absent, so instances starting at once agree on one key (without the lock two racing
 * instances could each settle on their own row, and a session sealed by one was unknown to the
 * other). Where rows from an earlier race exist, every instance takes the oldest.
 */
export async function gatewaySessionKey(prisma: PrismaClient, clock: Clock): Promise<Buffer> {
  const oldest = {
    where: { purpose: PURPOSE, retiredAt: null },
    orderBy: [{ createdAt: 'asc' as const }, { kid: 'asc' as const }],
  };
  let row = await prisma.signingKey.findFirst(oldest);
  row ??= await prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`plaza.signing_keys.${PURPOSE}`}))::text AS locked`;
    const existing = await tx.signingKey.findFirst(oldest);
    if (existing) return existing;
    return tx.signingKey.create({
      data: {
        kid: newId('gsk', clock.now()),
        purpose: PURPOSE,
        publicJwk: {},
        privateJwk: { kty: 'oct', k: randomBytes(32).toString('base64url') },
        createdAt: new Date(clock.now()),
      },
    });
  });
  const k = (row?.privateJwk as { k?: unknown } | null)?.k;
  if (typeof k !== 'string') throw new Error('gateway session key is missing or malformed');
  const key = Buffer.from(k, 'base64url');
  if (key.length !== 32) throw new Error('gateway session key must be 32 bytes');
  return key;
}

import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';

/** The kinds whose payload names the agent they act as (`accountId`): revoking the agent deletes them. */
const AGENT_BOUND = new Set(['Grant', 'AccessToken', 'RefreshToken', 'AuthorizationCode']);

/** How often (at most) an instance deletes expired records, in ms. */
const PURGE_EVERY_MS = 60_000;

/**
 * oidc-provider's storage over the `oauth_records` table: one row per (kind, id) with the payload
 * as JSON, so every instance reads what another wrote (a code issued by one is redeemed at
 * another). Expired rows are never returned and are purged at most once a minute per instance.
 * `consume` stamps the payload (`consumed`), which is how the provider detects a code or refresh
 * token used twice (and then revokes the whole grant).
 */
export function createRecordAdapterFactory(prisma: PrismaClient, clock: Clock): (kind: string) => Adapter {
  let lastPurge = 0;
  const purge = () => {
    const now = clock.now();
    if (now - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = now;
    prisma.oAuthRecord.deleteMany({ where: { expiresAt: { lt: new Date(now) } } }).catch(() => undefined);
  };

  return (kind: string): Adapter => {
    const live = (
      row: { payload: unknown; expiresAt: Date | null; consumedAt: Date | null } | null,
    ): AdapterPayload | undefined => {
      if (!row || (row.expiresAt !== null && row.expiresAt.getTime() <= clock.now())) return undefined;
      const payload = row.payload as AdapterPayload;
      return row.consumedAt === null ? payload : { ...payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) };
    };
    return {
      async upsert(id, payload, expiresIn) {
        purge();
        const expiresAt = expiresIn ? new Date(clock.now() + expiresIn * 1000) : null;
        const agentId = AGENT_BOUND.has(kind) && typeof payload.accountId === 'string' ? payload.accountId : null;
        const data = {
          payload: payload as object,
          grantId: payload.grantId ?? null,
          uid: payload.uid ?? null,
          agentId,
          expiresAt,
        };
        await prisma.oAuthRecord.upsert({
          where: { kind_id: { kind, id } },
          create: { kind, id, ...data },
          update: data,
        });
      },
      async find(id) {
        if (id.length > 1024 || id.includes('\u0000')) return undefined;
        return live(await prisma.oAuthRecord.findUnique({ where: { kind_id: { kind, id } } }));
      },
      async findByUid(uid) {
        if (uid.length > 1024 || uid.includes('\u0000')) return undefined;
        return live(await prisma.oAuthRecord.findFirst({ where: { kind, uid } }));
      },
      async findByUserCode() {
        // The device flow is not enabled: no record has a user code.
        return undefined;
      },
      async consume(id) {
        await prisma.oAuthRecord.updateMany({
          where: { kind, id, consumedAt: null },
          data: { consumedAt: new Date(clock.now()) },
        });
      },
      async destroy(id) {
        await prisma.oAuthRecord.deleteMany({ where: { kind, id } });
      },
      async revokeByGrantId(grantId) {
        await prisma.oAuthRecord.deleteMany({ where: { grantId } });
      },
    };
  };
}

import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId, NotFoundError, ValidationError } from '../kernel/index.ts';
import { mintApiKey } from './api-keys.ts';

/** An API key as its owner sees it (never the secret, except once at creation). */
export interface ApiKeyView {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const MAX_ACTIVE_KEYS = 50;

/** API key management for a signed-in account: list, create (secret shown once), revoke. */
export interface KeyManagement {
  list(accountId: string): Promise<ApiKeyView[]>;
  create(accountId: string, name: string | undefined): Promise<{ key: ApiKeyView; secret: string }>;
  revoke(accountId: string, keyId: string): Promise<ApiKeyView>;
}

const toView = (r: ApiKeyView): ApiKeyView => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
  revokedAt: r.revokedAt,
});

/** Creates the key management service. */
export function createKeyManagement(deps: { prisma: PrismaClient; clock: Clock }): KeyManagement {
  const { prisma, clock } = deps;
  return {
    async list(accountId) {
      const rows = await prisma.apiKey.findMany({
        where: { accountId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      });
      return rows.map(toView);
    },
    async create(accountId, name) {
      const label = name?.trim() || null;
      if (label !== null && label.length > 100)
        throw new ValidationError('name must be at most 100 characters.', { param: 'name' });
      const active = await prisma.apiKey.count({ where: { accountId, revokedAt: null } });
      if (active >= MAX_ACTIVE_KEYS)
        throw new ValidationError(`An account may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first.`);
      const minted = mintApiKey();
      const row = await prisma.apiKey.create({
        data: {
          id: newId('key', clock.now()),
          accountId,
          name: label,
          prefix: minted.prefix,
          hash: minted.hash,
          createdAt: new Date(clock.now()),
        },
      });
      return { key: toView(row), secret: minted.secret };
    },
    async revoke(accountId, keyId) {
      // No stored id holds a NUL, and PostgreSQL refuses one in a query (it answered 500).
      if (keyId.includes('\u0000')) throw new NotFoundError('No such key on this account.');
      const row = await prisma.apiKey.findFirst({ where: { id: keyId, accountId } });
      if (!row) throw new NotFoundError('No such key on this account.');
      if (row.revokedAt !== null) return toView(row);
      return toView(await prisma.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date(clock.now()) } }));
    },
  };
}

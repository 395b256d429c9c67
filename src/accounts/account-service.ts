import { z } from 'zod';

import type { PrismaClient } from '../db/index.ts';
import {
  AuthError,
  type Clock,
  ConflictError,
  digestsEqual,
  hashSecret,
  newId,
  ValidationError,
} from '../kernel/index.ts';
import { mintApiKey, parseApiKey } from './api-keys.ts';

/** An account as the rest of Plaza sees it. */
export interface Account {
  id: string;
  email: string;
  name: string | null;
  status: string;
  createdAt: Date;
}

/** Who an API key belongs to. */
export interface ApiKeyPrincipal {
  kind: 'account';
  accountId: string;
  keyId: string;
}

const EmailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email());

/** Account operations: create with a first API key, authenticate API keys. */
export interface AccountService {
  /** Creates an account and its first API key; the key is returned once and stored hashed. */
  createAccount(input: { email: string; name?: string | undefined }): Promise<{ account: Account; apiKey: string }>;
  /** Resolves `Authorization: Bearer <key>` to its account, or throws AuthError. */
  authenticateApiKey(presented: string): Promise<ApiKeyPrincipal>;
  getAccount(id: string): Promise<Account | undefined>;
}

/** Creates the account service over the database. */
export function createAccountService(deps: { prisma: PrismaClient; clock: Clock }): AccountService {
  const { prisma, clock } = deps;
  return {
    async createAccount(input) {
      const parsed = EmailSchema.safeParse(input.email);
      if (!parsed.success)
        throw new ValidationError(`Not a valid e-mail address: ${JSON.stringify(input.email)}`, { param: 'email' });
      const email = parsed.data;
      const name = input.name?.trim() || null;
      if (name !== null && name.length > 200)
        throw new ValidationError('Name is longer than 200 characters.', { param: 'name' });
      const key = mintApiKey();
      const now = new Date(clock.now());
      const id = newId('acc', clock.now());
      try {
        const row = await prisma.account.create({
          data: {
            id,
            email,
            name,
            createdAt: now,
            apiKeys: {
              create: {
                id: newId('key', clock.now()),
                prefix: key.prefix,
                hash: key.hash,
                name: 'default',
                createdAt: now,
              },
            },
          },
        });
        return { account: toAccount(row), apiKey: key.secret };
      } catch (error) {
        if ((error as { code?: string }).code === 'P2002')
          throw new ConflictError(`An account with e-mail ${email} already exists.`, { cause: error });
        throw error;
      }
    },

    async authenticateApiKey(presented) {
      const parsed = parseApiKey(presented);
      if (!parsed) {
        // The credential a caller most often sends here by mistake gets named.
        if (presented.startsWith('agt_'))
          throw new AuthError(
            "This is an agent token (agt_…), the gateway's credential; this route takes an account API key (plz_…).",
          );
        throw new AuthError('Invalid API key.');
      }
      const key = await prisma.apiKey.findUnique({ where: { prefix: parsed.prefix }, include: { account: true } });
      if (!key || key.revokedAt !== null || !digestsEqual(key.hash, hashSecret(presented)))
        throw new AuthError('Invalid API key.');
      if (key.account.status !== 'active') throw new AuthError('This account is not active.');
      return { kind: 'account', accountId: key.accountId, keyId: key.id };
    },

    async getAccount(id) {
      const row = await prisma.account.findUnique({ where: { id } });
      return row ? toAccount(row) : undefined;
    },
  };
}

function toAccount(row: { id: string; email: string; name: string | null; status: string; createdAt: Date }): Account {
  return { id: row.id, email: row.email, name: row.name, status: row.status, createdAt: row.createdAt };
}

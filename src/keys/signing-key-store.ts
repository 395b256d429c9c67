import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';

import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId } from '../kernel/index.ts';

/** The key a purpose signs with right now. */
export interface ActiveSigningKey {
  kid: string;
  purpose: string;
  /** Always `EdDSA` (Ed25519). */
  alg: 'EdDSA';
  privateKey: CryptoKey;
  /** The same private key for node:crypto (synchronous signing on hot paths). */
  privateKeyObject: KeyObject;
  publicJwk: JWK;
}

/** A published public key, found by `kid`. */
export interface PublishedKey {
  kid: string;
  purpose: string;
  key: CryptoKey;
  jwk: JWK;
  retiredAt: Date | null;
}

/** A JWK Set document (RFC 7517 §5); each key carries the purpose it signs for. */
export interface JwksDocument {
  keys: Array<JWK & { purpose: string }>;
}

/** Options of {@link createSigningKeyStore}. */
export interface SigningKeyStoreOptions {
  prisma: PrismaClient;
  clock: Clock;
  /**
   * How long a retired key stays published, per purpose, in seconds: at least the lifetime of
   * what it signed. `Infinity` keeps it forever (e.g. checkpoint signatures). Default 86400.
   */
  retentionSeconds?: Readonly<Record<string, number>>;
  defaultRetentionSeconds?: number;
  /** How long an instance reuses what it read from the database. Default 60 s. */
  cacheTtlMs?: number;
}

/**
 * Ed25519 signing keys shared by every Plaza instance through the `signing_keys` table, one
 * active key per purpose ('token', 'assertion', 'receipts', ...).
 */
export interface SigningKeyStore {
  /** The purpose's active key, created on first use (once, across instances). */
  activeKey(purpose: string): Promise<ActiveSigningKey>;
  /** A published (active or retired-but-retained) key by `kid`; undefined when unknown or expired. */
  publishedKey(kid: string): Promise<PublishedKey | undefined>;
  /** Replaces the purpose's active key; the old one stays published for its retention. */
  rotate(purpose: string): Promise<ActiveSigningKey>;
  /** Every published public key of every purpose. */
  jwks(): Promise<JwksDocument>;
}

interface KeyRow {
  kid: string;
  purpose: string;
  publicJwk: unknown;
  privateJwk: unknown;
  createdAt: Date;
  retiredAt: Date | null;
}

const PURPOSE = /^[a-z][a-z0-9_-]{0,31}$/;
const NEGATIVE_CACHE_MAX = 1_000;

/** Creates the store; the options are checked here, not on first use. */
export function createSigningKeyStore(options: SigningKeyStoreOptions): SigningKeyStore {
  const { prisma, clock } = options;
  const cacheTtlMs = options.cacheTtlMs ?? 60_000;
  const defaultRetention = options.defaultRetentionSeconds ?? 86_400;
  for (const [purpose, seconds] of Object.entries(options.retentionSeconds ?? {})) {
    if (!PURPOSE.test(purpose) || !(seconds >= 0))
      throw new Error(`Invalid retention for signing-key purpose ${purpose}`);
  }
  const retentionMs = (purpose: string): number => (options.retentionSeconds?.[purpose] ?? defaultRetention) * 1000;
  const published = (row: Pick<KeyRow, 'purpose' | 'retiredAt'>, now: number): boolean =>
    row.retiredAt === null || row.retiredAt.getTime() + retentionMs(row.purpose) > now;

  const active = new Map<string, { key: ActiveSigningKey; until: number }>();
  const byKid = new Map<string, { key: PublishedKey | undefined; until: number }>();

  async function toActive(row: KeyRow): Promise<ActiveSigningKey> {
    const privateKey = (await importJWK(row.privateJwk as JWK, 'EdDSA')) as CryptoKey;
    const privateKeyObject = createPrivateKey({ key: row.privateJwk as JsonWebKey, format: 'jwk' });
    return {
      kid: row.kid,
      purpose: row.purpose,
      alg: 'EdDSA',
      privateKey,
      privateKeyObject,
      publicJwk: publicJwkOf(row),
    };
  }

  /** Newest unretired key; extra unretired ones (lost creation races) are retired, still published. */
  async function loadActive(purpose: string): Promise<KeyRow | undefined> {
    const rows = await prisma.signingKey.findMany({
      where: { purpose, retiredAt: null },
      orderBy: [{ createdAt: 'desc' }, { kid: 'desc' }],
    });
    const [newest, ...older] = rows;
    if (older.length > 0) {
      await prisma.signingKey.updateMany({
        where: { kid: { in: older.map((row) => row.kid) }, retiredAt: null },
        data: { retiredAt: new Date(clock.now()) },
      });
    }
    return newest;
  }

  /** Inserts a new key for `purpose` under a transaction-scoped advisory lock. */
  async function createKey(purpose: string, mode: 'if-absent' | 'rotate'): Promise<KeyRow> {
    const { publicJwk, privateJwk } = await newKeyPair();
    return prisma.$transaction(async (tx) => {
      // Serialises creators of the same purpose across instances (no-op cost on PGlite).
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`plaza.signing_keys.${purpose}`}))::text AS locked`;
      const now = new Date(clock.now());
      if (mode === 'if-absent') {
        const existing = await tx.signingKey.findFirst({
          where: { purpose, retiredAt: null },
          orderBy: [{ createdAt: 'desc' }, { kid: 'desc' }],
        });
        if (existing) return existing;
      } else {
        await tx.signingKey.updateMany({ where: { purpose, retiredAt: null }, data: { retiredAt: now } });
      }
      const kid = newId(purpose, now.getTime());
      return tx.signingKey.create({
        data: { kid, purpose, publicJwk: { ...publicJwk, kid }, privateJwk: { ...privateJwk, kid }, createdAt: now },
      });
    });
  }

  function remember(key: ActiveSigningKey): ActiveSigningKey {
    active.set(key.purpose, { key, until: clock.now() + cacheTtlMs });
    return key;
  }

  return {
    async activeKey(purpose) {
      if (!PURPOSE.test(purpose)) throw new Error(`Invalid signing-key purpose ${JSON.stringify(purpose)}`);
      const cached = active.get(purpose);
      if (cached && cached.until > clock.now()) return cached.key;
      const row = (await loadActive(purpose)) ?? (await createKey(purpose, 'if-absent'));
      return remember(await toActive(row));
    },

    async rotate(purpose) {
      if (!PURPOSE.test(purpose)) throw new Error(`Invalid signing-key purpose ${JSON.stringify(purpose)}`);
      byKid.clear();
      return remember(await toActive(await createKey(purpose, 'rotate')));
    },

    async publishedKey(kid) {
      const now = clock.now();
      const cached = byKid.get(kid);
      if (cached && cached.until > now) return cached.key && published(cached.key, now) ? cached.key : undefined;
      // No row holds such a kid, and PostgreSQL refuses NUL in a query: not a lookup to make.
      if (kid.length > 128 || kid.includes('\u0000')) return undefined;
      const row = await prisma.signingKey.findUnique({ where: { kid } });
      let key: PublishedKey | undefined;
      if (row && isSigningRow(row) && published(row, now)) {
        const jwk = publicJwkOf(row);
        key = {
          kid: row.kid,
          purpose: row.purpose,
          key: (await importJWK(jwk, 'EdDSA')) as CryptoKey,
          jwk,
          retiredAt: row.retiredAt,
        };
      }
      // Unknown kids are remembered briefly too, so forged kids cannot make every request a query.
      if (byKid.size >= NEGATIVE_CACHE_MAX) byKid.clear();
      byKid.set(kid, { key, until: now + (key ? cacheTtlMs : Math.min(cacheTtlMs, 10_000)) });
      return key;
    },

    async jwks() {
      const now = clock.now();
      const rows = await prisma.signingKey.findMany({ orderBy: [{ createdAt: 'desc' }, { kid: 'desc' }] });
      return { keys: rows.filter((row) => isSigningRow(row) && published(row, now)).map(publicJwkOf) };
    },
  };
}

/**
 * True for Ed25519 signing rows. The table also holds secrets that are not signing keys (the
 * gateway's session-sealing key, an `oct` JWK); those are never published or used to verify.
 */
function isSigningRow(row: Pick<KeyRow, 'publicJwk'>): boolean {
  const jwk = row.publicJwk as JWK | null;
  return jwk?.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string';
}

/**
 * The published JWK: the public key, its `kid` and its `purpose` (a member of Plaza's own, which
 * JWK consumers ignore), so a verifier can refuse a key of another purpose (e.g. a checkpoint
 * signed by a token key). Kids have always begun with `<purpose>_`, for JWKS documents before it.
 */
function publicJwkOf(row: Pick<KeyRow, 'kid' | 'purpose' | 'publicJwk'>): JWK & { purpose: string } {
  const { kty, crv, x } = row.publicJwk as JWK;
  return { kty, crv, x, kid: row.kid, alg: 'EdDSA', use: 'sig', purpose: row.purpose };
}

async function newKeyPair(): Promise<{ publicJwk: JWK; privateJwk: JWK }> {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const [publicJwk, privateJwk] = await Promise.all([exportJWK(pair.publicKey), exportJWK(pair.privateKey)]);
  return { publicJwk, privateJwk };
}

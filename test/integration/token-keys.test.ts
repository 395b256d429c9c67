/**
 * Pins the signing-key store and guest-token verification on a real database: one key created
 * across concurrent instances, rotation keeping the old key published for a token lifetime, the
 * JWKS route, and every way a bearer JWT must be refused.
 */
import { base64url, type CryptoKey, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewaySessionKey } from '../../src/connectors/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { AuthError, type Clock, systemClock } from '../../src/kernel/index.ts';
import { createSigningKeyStore } from '../../src/keys/index.ts';
import { createGuestTokens, GUEST_TOKEN_TYP, localInstanceIssuers } from '../../src/tokens/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const DAY = 86_400_000;
const ISSUER = 'https://plaza.test';

function fixedClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

describe.each(BACKENDS)('signing keys on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await database?.dispose();
  });

  it('creates one active key per purpose even when instances race', async () => {
    const clock = fixedClock(Date.now());
    const stores = Array.from({ length: 4 }, () => createSigningKeyStore({ prisma: database.db.prisma, clock }));
    const keys = await Promise.all(stores.map((store) => store.activeKey('race')));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await database.db.prisma.signingKey.count({ where: { purpose: 'race' } })).toBe(1);
  });

  it('gives instances starting at once one gateway session key', async () => {
    // Separate connections on PostgreSQL, as separate instances have; PGlite has one owner.
    const others =
      backend === 'postgres'
        ? await Promise.all(
            Array.from({ length: 3 }, () => openDatabase({ kind: 'postgres', url: database.url!, poolMax: 2 })),
          )
        : [];
    const prismas = [database.db.prisma, ...others.map((db) => db.prisma)];
    try {
      for (let round = 0; round < 20; round++) {
        await database.db.prisma.signingKey.deleteMany({ where: { purpose: 'gateway-session' } });
        const keys = await Promise.all(
          [...prismas, ...prismas].map((prisma) => gatewaySessionKey(prisma, systemClock)),
        );
        expect(new Set(keys.map((k) => k.toString('hex'))).size, `round ${round}`).toBe(1);
        expect(
          await database.db.prisma.signingKey.count({ where: { purpose: 'gateway-session' } }),
          `round ${round}`,
        ).toBe(1);
      }
    } finally {
      await Promise.all(others.map((db) => db.close()));
    }
  });

  it('keeps a rotated key published for one token lifetime, then drops it', async () => {
    const clock = fixedClock(Date.now());
    const store = createSigningKeyStore({ prisma: database.db.prisma, clock, cacheTtlMs: 0 });
    const old = await store.activeKey('rot');
    const fresh = await store.rotate('rot');
    expect(fresh.kid).not.toBe(old.kid);
    expect((await store.activeKey('rot')).kid).toBe(fresh.kid);
    let kids = (await store.jwks()).keys.map((k) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([old.kid, fresh.kid]));
    expect(await store.publishedKey(old.kid)).toMatchObject({ kid: old.kid, purpose: 'rot' });
    clock.advance(DAY + 1_000);
    kids = (await store.jwks()).keys.map((k) => k.kid);
    expect(kids).toContain(fresh.kid);
    expect(kids).not.toContain(old.kid);
    expect(await store.publishedKey(old.kid)).toBeUndefined();
  });

  it('publishes only public material', async () => {
    const store = createSigningKeyStore({ prisma: database.db.prisma, clock: fixedClock(Date.now()) });
    const pub = await store.activeKey('pub');
    expect((await store.jwks()).keys.find((jwk) => jwk.kid === pub.kid)).toMatchObject({ purpose: 'pub' });
    for (const jwk of (await store.jwks()).keys) {
      expect(Object.keys(jwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'purpose', 'use', 'x']);
      expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      // Its purpose, which its kid begins with too, so verifiers can refuse a key of another purpose.
      expect(jwk.kid?.startsWith(`${jwk.purpose}_`)).toBe(true);
    }
  });
});

describe.each(BACKENDS)('guest tokens on %s', (backend) => {
  let database: TestDatabase;
  const clock = fixedClock(Date.now());
  let store: ReturnType<typeof createSigningKeyStore>;
  let tokens: ReturnType<typeof createGuestTokens>;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
    store = createSigningKeyStore({ prisma: database.db.prisma, clock, cacheTtlMs: 0 });
    tokens = createGuestTokens({ keys: store, clock, issuer: ISSUER });
  });
  afterAll(async () => {
    await database?.dispose();
  });

  /** Signs `claims` with the real token key unless told otherwise. */
  async function sign(
    options: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: CryptoKey } = {},
  ) {
    const active = await store.activeKey('token');
    const now = Math.floor(clock.now() / 1000);
    const claims = {
      scope: 'chat agents:read',
      iss: ISSUER,
      aud: 'plaza-api',
      sub: 'gst_test',
      jti: 'jti1',
      iat: now,
      exp: now + 3600,
      ...options.claims,
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: active.kid, typ: GUEST_TOKEN_TYP, ...options.header })
      .sign(options.key ?? active.privateKey);
  }

  it('issues a token that verifies, with every documented claim', async () => {
    const issued = await tokens.issue();
    expect(issued).toMatchObject({ expiresIn: 86_400, tokenType: 'Bearer', guestId: expect.stringMatching(/^gst_/) });
    const claims = await tokens.verify(issued.token);
    expect(claims).toMatchObject({ guestId: issued.guestId, scopes: ['chat', 'agents:read'] });
    expect(claims.expiresAt - claims.issuedAt).toBe(86_400);
  });

  it('accepts a token until its 24 hours are over', async () => {
    const issued = await tokens.issue();
    clock.advance(DAY - 60_000);
    await expect(tokens.verify(issued.token)).resolves.toBeDefined();
    clock.advance(120_000);
    await expect(tokens.verify(issued.token)).rejects.toThrow(/expired/i);
  });

  it('still accepts tokens signed by a rotated-out key', async () => {
    const issued = await tokens.issue();
    await store.rotate('token');
    await expect(tokens.verify(issued.token)).resolves.toMatchObject({ guestId: issued.guestId });
  });

  const forged = async () => {
    const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    return sign({ key: other.privateKey });
  };
  const unsigned = async () => {
    const real = (await sign()).split('.');
    const header = base64url.encode(
      JSON.stringify({ ...JSON.parse(new TextDecoder().decode(base64url.decode(real[0]!))), alg: 'none' }),
    );
    return `${header}.${real[1]}.`;
  };
  const noneWithSignature = async () => {
    const real = (await sign()).split('.');
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: GUEST_TOKEN_TYP, kid: 'x' }));
    return `${header}.${real[1]}.${real[2]}`;
  };
  const otherPurposeKey = async () => {
    const assertionKey = await store.activeKey('assertion');
    return sign({ key: assertionKey.privateKey, header: { kid: assertionKey.kid } });
  };

  it.each<[string, () => Promise<string>]>([
    ['garbage', async () => 'not-a-jwt'],
    ['a forged signature', forged],
    ['alg none without a signature', unsigned],
    ['alg none with a signature', noneWithSignature],
    ['another audience', () => sign({ claims: { aud: 'someone-else' } })],
    ['another issuer', () => sign({ claims: { iss: 'https://evil.test' } })],
    ['a plain JWT typ', () => sign({ header: { typ: 'JWT' } })],
    ['an unknown kid', () => sign({ header: { kid: 'token_unknown' } })],
    ['a key of another purpose', otherPurposeKey],
    ['no subject', () => sign({ claims: { sub: undefined } })],
    ['no expiry', () => sign({ claims: { exp: undefined } })],
    [
      'a lifetime beyond 24 hours',
      () =>
        sign({
          claims: { iat: Math.floor(clock.now() / 1000) - 2 * 86_400, exp: Math.floor(clock.now() / 1000) + 3600 },
        }),
    ],
  ])('refuses %s', async (_name, make) => {
    await expect(tokens.verify(await make())).rejects.toBeInstanceOf(AuthError);
  });

  it('accepts a token signed by hand with the active key (the refusals above are not vacuous)', async () => {
    await expect(tokens.verify(await sign())).resolves.toMatchObject({ guestId: 'gst_test', jti: 'jti1' });
  });

  it('refuses a token without an issuer', async () => {
    await expect(tokens.verify(await sign({ claims: { iss: undefined } }))).rejects.toThrow(/"iss"/);
  });

  it("accepts, between instances on one machine without PUBLIC_BASE_URL, each other's tokens; with one set, only its own issuer", async () => {
    const on = (issuer: string) =>
      createGuestTokens({ keys: store, clock, issuer, alsoIssuer: localInstanceIssuers(issuer) });
    const a = on('http://localhost:8080');
    const b = on('http://localhost:8081');
    const fromA = await a.issue();
    await expect(b.verify(fromA.token)).resolves.toMatchObject({ guestId: fromA.guestId });
    // A public address names one issuer: a localhost token is not one of its own, nor the reverse.
    const site = on('https://plaza.test');
    await expect(site.verify(fromA.token)).rejects.toThrow(/"iss"/);
    await expect(b.verify((await site.issue()).token)).rejects.toThrow(/"iss"/);
    await expect(b.verify(await sign({ claims: { iss: 'http://localhost.evil.test:8080' } }))).rejects.toThrow(/"iss"/);
  });
});

describe.each(BACKENDS)('GET /.well-known/jwks.json on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend);
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('publishes the key that signs guest tokens, cacheable', async () => {
    const issued: any = await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json();
    const kid = JSON.parse(Buffer.from(issued.data.token.split('.')[0], 'base64url').toString()).kid;
    const res = await fetch(`${plaza.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const body: any = await res.json();
    expect(body.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
  });
});

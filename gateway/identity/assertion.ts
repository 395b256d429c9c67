import { KeyObject, sign, webcrypto } from 'node:crypto';

import { type CryptoKey, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';

import { AuthError } from '../../src/kernel/index.ts';
import type { AginCard } from './agin-card.ts';

/** The JWT `typ` of identity assertions, so they cannot be confused with other Plaza tokens. */
export const ASSERTION_TYP = 'agin-assertion+jwt';

/** Lifetime of an assertion: long enough for one call, short enough that replay is useless. */
export const ASSERTION_TTL_SECONDS = 60;

/** The key assertions are signed with (an Ed25519 key of the signing-key store). */
export interface AssertionKey {
  kid: string;
  privateKey: CryptoKey;
  /** The same key for node:crypto (fast, synchronous); else derived from an extractable `privateKey`, else WebCrypto signs. */
  keyObject?: KeyObject;
}

/** Claims of an identity assertion. */
export interface AssertionClaims {
  agin_id: string;
  agent_principal: string;
  call_id: string;
  aud: string;
  iss: string;
  iat: number;
  exp: number;
}

const keyObjects = new WeakMap<CryptoKey, KeyObject>();
const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * Signs the `X-PLATFORM-AGIN-Assertion` JWS for one call: EdDSA over {agin_id, agent_principal,
 * call_id, aud = the upstream URL, iat, exp = iat + 60 s}. Providers verify it against Plaza's
 * `/.well-known/jwks.json`, so identity headers cannot be forged or replayed elsewhere.
 *
 * A compact JWS built here and signed with node:crypto's synchronous Ed25519 (~50 µs) rather than
 * jose's WebCrypto path, whose per-call job on the thread pool showed in the gateway's profile;
 * the tests verify these tokens with jose.
 */
export async function signAssertion(
  key: AssertionKey,
  input: { card: AginCard; callId: string; audience: string; issuer: string; nowSeconds: number },
): Promise<string> {
  let keyObject = key.keyObject ?? keyObjects.get(key.privateKey);
  if (!keyObject && key.privateKey.extractable)
    keyObjects.set(key.privateKey, (keyObject = KeyObject.from(key.privateKey)));
  const header = b64url(JSON.stringify({ alg: 'EdDSA', kid: key.kid, typ: ASSERTION_TYP }));
  const payload = b64url(
    JSON.stringify({
      agin_id: input.card.aginId,
      agent_principal: input.card.agentPrincipal,
      call_id: input.callId,
      iss: input.issuer,
      aud: input.audience,
      iat: input.nowSeconds,
      exp: input.nowSeconds + ASSERTION_TTL_SECONDS,
    }),
  );
  const signingInput = `${header}.${payload}`;
  const signature = keyObject
    ? sign(null, Buffer.from(signingInput), keyObject)
    : // A non-extractable key without its KeyObject (tests, embedders): WebCrypto signs it.
      Buffer.from(
        await webcrypto.subtle.sign('Ed25519', key.privateKey as webcrypto.CryptoKey, Buffer.from(signingInput)),
      );
  return `${signingInput}.${b64url(signature)}`;
}

/**
 * Verifies an assertion as a provider would (used by Plaza's tests and offered to providers in
 * docs): signature by a key of the JWKS, `typ`, audience = the provider's URL, not expired.
 */
export async function verifyAssertion(
  token: string,
  keys: JWTVerifyGetKey,
  expected: { audience: string; issuer: string },
): Promise<AssertionClaims> {
  try {
    if (decodeProtectedHeader(token).typ !== ASSERTION_TYP) throw new AuthError('Not an AGIN assertion.');
    const { payload } = await jwtVerify(token, keys, {
      audience: expected.audience,
      issuer: expected.issuer,
      algorithms: ['EdDSA'],
      typ: ASSERTION_TYP,
    });
    return payload as unknown as AssertionClaims;
  } catch (error) {
    if (error instanceof AuthError) throw error;
    throw new AuthError('Invalid AGIN assertion.', { cause: error });
  }
}

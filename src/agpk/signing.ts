import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

import { CompactSign, compactVerify, EmbeddedJWK, type JWK } from 'jose';

import { AgpkError } from './errors.ts';

/**
 * AHCP package signatures: an Ed25519 JWS (alg EdDSA) over the bytes of DIGESTS, with a detached
 * payload (RFC 7515 appendix F), stored in `ahcp.signature` as `<protected>..<signature>`. The
 * protected header embeds the public JWK and its `kid` (RFC 7638 thumbprint), so anyone can check
 * integrity; trust is a separate question answered by the installer's trusted keys.
 */

/** The outcome of checking a signature. */
export interface SignatureCheck {
  valid: boolean;
  kid: string | null;
  /** The embedded public key, when the signature could be parsed. */
  jwk: JWK | null;
  reason?: string;
}

/** RFC 7638 thumbprint of an Ed25519 public key (base64url of sha256 over {crv,kty,x}). */
export function keyId(jwk: JWK): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
}

function publicJwk(key: KeyObject): JWK {
  const pub = key.type === 'public' ? key : createPublicKey(key);
  const jwk = pub.export({ format: 'jwk' }) as JWK;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519')
    throw new AgpkError('bad_request', 'the signing key must be an Ed25519 key');
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
}

/** Generates an Ed25519 key pair and writes `<prefix>.key.pem` (0600) and `<prefix>.pub.pem`. */
export async function generateSigningKey(
  prefix: string,
): Promise<{ privateKey: string; publicKey: string; kid: string }> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyPath = `${prefix}.key.pem`;
  const pubPath = `${prefix}.pub.pem`;
  await writeFile(keyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
  await writeFile(pubPath, publicKey.export({ format: 'pem', type: 'spki' }), { flag: 'wx' });
  return { privateKey: keyPath, publicKey: pubPath, kid: keyId(publicJwk(publicKey)) };
}

/** Loads an Ed25519 private key from a PEM file. */
export async function loadPrivateKey(path: string): Promise<KeyObject> {
  try {
    const key = createPrivateKey(await readFile(path, 'utf8'));
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`a ${key.asymmetricKeyType ?? 'non-asymmetric'} key`);
    return key;
  } catch (error) {
    throw new AgpkError(
      'bad_request',
      `cannot use ${path} as an Ed25519 private key: ${(error as Error).message} (pass the <prefix>.key.pem that \`plaza agpk keygen <prefix>\` wrote)`,
      { cause: error },
    );
  }
}

/** Loads trusted public keys (PEM files) and returns their key ids. */
export async function loadTrustedKeyIds(paths: string[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const path of paths) {
    try {
      ids.add(keyId(publicJwk(createPublicKey(await readFile(path, 'utf8')))));
    } catch (error) {
      throw new AgpkError(
        'bad_request',
        `cannot use ${path} as an Ed25519 public key: ${(error as Error).message} (pass the <prefix>.pub.pem that \`plaza agpk keygen <prefix>\` wrote)`,
        { cause: error },
      );
    }
  }
  return ids;
}

/** Signs the DIGESTS bytes; returns the value for `ahcp.signature`. */
export async function signDigests(digests: Buffer, key: KeyObject): Promise<{ signature: string; kid: string }> {
  const jwk = publicJwk(key);
  const kid = keyId(jwk);
  const jws = await new CompactSign(digests)
    .setProtectedHeader({ alg: 'EdDSA', kid, jwk, typ: 'agpk-digests+jws' })
    .sign(key);
  const [header, , sig] = jws.split('.');
  return { signature: `${header!}..${sig!}`, kid };
}

/** Checks `signature` over the DIGESTS bytes with the key it embeds. Never throws. */
export async function checkSignature(digests: Buffer, signature: string): Promise<SignatureCheck> {
  const parts = signature.split('.');
  if (parts.length !== 3 || parts[1] !== '')
    return { valid: false, kid: null, jwk: null, reason: 'not a detached JWS (<protected>..<signature>)' };
  try {
    const result = await compactVerify(`${parts[0]!}.${digests.toString('base64url')}.${parts[2]!}`, EmbeddedJWK, {
      algorithms: ['EdDSA', 'Ed25519'],
    });
    const jwk = result.protectedHeader.jwk as JWK;
    const kid = keyId(jwk);
    if (result.protectedHeader.kid !== undefined && result.protectedHeader.kid !== kid)
      return { valid: false, kid, jwk, reason: 'kid does not match the embedded key' };
    return { valid: true, kid, jwk };
  } catch (error) {
    return { valid: false, kid: null, jwk: null, reason: (error as Error).message };
  }
}

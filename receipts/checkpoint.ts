/**
 * Signed checkpoints (RFC 6962 "signed tree head" style): the canonical text of a tree head and
 * an Ed25519 JWS with detached payload (RFC 7515 Appendix F) over it, verifiable against a JWKS.
 */
import { CompactSign, compactVerify, createLocalJWKSet, type CryptoKey, type JSONWebKeySet } from 'jose';

/** A tree head: the first `treeSize` receipts hash to `rootHash`, the last chain hash is `chainHead`. */
export interface TreeHead {
  treeSize: number;
  /** hex */
  rootHash: string;
  /** hex; 64 zeros for the empty tree. */
  chainHead: string;
  /** When it was signed, ms since the epoch. */
  timestamp: number;
}

/** A tree head with its signature. */
export interface Checkpoint extends TreeHead {
  keyId: string;
  /** JWS compact serialization with the payload detached: `<header>..<signature>`. */
  signature: string;
}

/** Signs checkpoint bytes; an adapter over whatever key store the host has. */
export interface CheckpointSigner {
  /** Returns the detached JWS over `payload` and the id of the key that signed it. */
  sign(payload: Uint8Array): Promise<{ keyId: string; signature: string }>;
}

/** JWS `typ` of checkpoint signatures. */
export const CHECKPOINT_TYP = 'plaza-receipts-checkpoint+jws';

/** The signing-key purpose of checkpoint keys: the `purpose` member of their JWK. */
export const CHECKPOINT_KEY_PURPOSE = 'receipts';

/**
 * True for a JWK that may sign checkpoints: `purpose` is `receipts`, or, in a JWKS from before
 * keys carried their purpose, the kid has the `receipts_` prefix every Plaza receipts key has.
 */
export function isCheckpointKey(jwk: unknown): boolean {
  if (typeof jwk !== 'object' || jwk === null) return false;
  const { kid, purpose } = jwk as { kid?: unknown; purpose?: unknown };
  if (purpose !== undefined) return purpose === CHECKPOINT_KEY_PURPOSE;
  return typeof kid === 'string' && kid.startsWith(`${CHECKPOINT_KEY_PURPOSE}_`);
}

/** The exact bytes a checkpoint signature covers. */
export function checkpointText(head: TreeHead): Buffer {
  return Buffer.from(
    [
      'plaza-receipts-checkpoint/v1',
      `tree_size ${head.treeSize}`,
      `root_hash ${head.rootHash}`,
      `chain_head ${head.chainHead}`,
      `timestamp ${new Date(head.timestamp).toISOString()}`,
      '',
    ].join('\n'),
    'utf8',
  );
}

/**
 * A CheckpointSigner over an Ed25519 key source, e.g. the signing-key store's
 * `activeKey('receipts')`; the key is fetched per signature so rotation takes effect at once.
 */
export function createJwsCheckpointSigner(
  activeKey: () => Promise<{ kid: string; privateKey: CryptoKey }>,
): CheckpointSigner {
  return {
    async sign(payload) {
      const key = await activeKey();
      const jws = await new CompactSign(payload)
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: CHECKPOINT_TYP })
        .sign(key.privateKey);
      const [header, , signature] = jws.split('.');
      return { keyId: key.kid, signature: `${header}..${signature}` };
    },
  };
}

/**
 * Verifies a checkpoint's signature against the receipts keys of a JWKS (see {@link isCheckpointKey});
 * resolves to a reason when it does not hold, undefined when it does (the key id in the JWS header
 * must match the checkpoint's `keyId`).
 */
export async function checkpointSignatureProblem(
  checkpoint: Checkpoint,
  jwks: JSONWebKeySet,
): Promise<string | undefined> {
  const parts = checkpoint.signature.split('.');
  if (parts.length !== 3 || parts[1] !== '') return 'signature is not a detached JWS';
  const named = jwks.keys.find(
    (jwk: unknown) => typeof jwk === 'object' && jwk !== null && (jwk as { kid?: unknown }).kid === checkpoint.keyId,
  );
  if (named && !isCheckpointKey(named)) return `key ${checkpoint.keyId} is not a receipts key (it has another purpose)`;
  const payload = Buffer.from(checkpointText(checkpoint)).toString('base64url');
  try {
    const keys = createLocalJWKSet({ keys: jwks.keys.filter(isCheckpointKey) });
    const { protectedHeader } = await compactVerify(`${parts[0]}.${payload}.${parts[2]}`, keys, {
      algorithms: ['EdDSA'],
    });
    if (protectedHeader.kid !== checkpoint.keyId)
      return `signature key ${String(protectedHeader.kid)} is not the checkpoint's key ${checkpoint.keyId}`;
    if (protectedHeader.typ !== CHECKPOINT_TYP) return 'signature has the wrong typ';
    return undefined;
  } catch (error) {
    return `signature does not verify (${error instanceof Error ? error.message : String(error)})`;
  }
}

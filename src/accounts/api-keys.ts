import { hashSecret, randomToken } from '../kernel/index.ts';

/** A freshly minted API key: `secret` is shown to its owner once; only `hash` is stored. */
export interface MintedKey {
  prefix: string;
  secret: string;
  hash: string;
}

const KEY_SHAPE = /^(plz_[0-9a-z]{13})_([0-9a-z]{40})$/;

/** Mints an API key `plz_<id>_<secret>`; the `plz_<id>` prefix finds the row, the hash checks it. */
export function mintApiKey(): MintedKey {
  const prefix = `plz_${randomToken(8)}`;
  const secret = `${prefix}_${randomToken(25)}`;
  return { prefix, secret, hash: hashSecret(secret) };
}

/** Splits a presented key into its lookup prefix, or undefined when it cannot be a Plaza key. */
export function parseApiKey(presented: string): { prefix: string } | undefined {
  const match = KEY_SHAPE.exec(presented);
  return match?.[1] === undefined ? undefined : { prefix: match[1] };
}

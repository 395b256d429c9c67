import { hashSecret, randomToken } from '../kernel/index.ts';

const TOKEN_SHAPE = /^agt_[0-9a-z]{13}_[0-9a-z]{40}$/;

/** Mints an agent gateway credential `agt_<id>_<secret>`; only its sha256 is stored. */
export function mintAgentToken(): { secret: string; hash: string } {
  const secret = `agt_${randomToken(8)}_${randomToken(25)}`;
  return { secret, hash: hashSecret(secret) };
}

/** True when `token` has the shape of an agent credential. */
export function looksLikeAgentToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

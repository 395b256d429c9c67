import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';

/** What a Plaza session id carries: which connector, which agent, and the upstream's session. */
export interface SessionClaims {
  provider: string;
  agentId: string;
  upstreamSessionId: string;
}

/** Seals and opens Plaza session ids. */
export interface SessionSealer {
  seal(claims: SessionClaims): string;
  /** The claims, or undefined when the id was not sealed by a holder of the key (or is damaged). */
  open(sessionId: string): SessionClaims | undefined;
  /**
   * A MAC of `text` (22 base64url characters) under a key derived from the sealing key: ids Plaza
   * hands a client (a call's event ids) carry one, so any instance can tell its own from a forgery.
   */
  sign(text: string): string;
}

const PREFIX = 'pss1.';
/** Session ids opened lately, so a session's every request does not pay a decipher (passthrough's hot path). */
const OPENED_CACHE_SIZE = 4096;

/**
 * Plaza session ids are the upstream session sealed with AES-256-GCM under a key every instance
 * shares (from the database): any instance can resume any session without sticky routing, the
 * upstream id stays hidden, and a session cannot be moved to another agent or connector.
 */
export function createSessionSealer(key: Buffer): SessionSealer {
  if (key.length !== 32) throw new Error('session sealing key must be 32 bytes');
  // One KeyObject for every call: handing node:crypto the raw bytes re-checks and re-imports
  // them on each cipher (it showed in the gateway's profile).
  const secret = createSecretKey(key);
  // Only ids that authenticated under the key get in, so the cache cannot be filled with forgeries
  // that would then open; the oldest entry goes first (Map keeps insertion order).
  const opened = new Map<string, SessionClaims>();
  // Its own key for MACs, so no input is ever both enciphered and MACed under one key.
  const macKey = createSecretKey(createHmac('sha256', secret).update('plaza id mac v1').digest());
  return {
    seal(claims) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const body = Buffer.concat([
        cipher.update(JSON.stringify([claims.provider, claims.agentId, claims.upstreamSessionId]), 'utf8'),
        cipher.final(),
      ]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sessionId) {
      const known = opened.get(sessionId);
      if (known) return { ...known };
      if (!sessionId.startsWith(PREFIX) || sessionId.length > 4096) return undefined;
      try {
        const raw = Buffer.from(sessionId.slice(PREFIX.length), 'base64url');
        if (raw.length < 29) return undefined;
        const decipher = createDecipheriv('aes-256-gcm', secret, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
        const [provider, agentId, upstreamSessionId] = JSON.parse(plain) as [string, string, string];
        const claims = { provider, agentId, upstreamSessionId };
        if (opened.size >= OPENED_CACHE_SIZE) opened.delete(opened.keys().next().value!);
        opened.set(sessionId, claims);
        return { ...claims };
      } catch {
        return undefined;
      }
    },
    sign(text) {
      return createHmac('sha256', macKey).update(text).digest().subarray(0, 16).toString('base64url');
    },
  };
}

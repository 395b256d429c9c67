import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose';

import { AuthError, type Clock, newId, randomToken } from '../kernel/index.ts';
import type { SigningKeyStore } from '../keys/index.ts';

/** JOSE `typ` of guest tokens: an OAuth 2.0 access token JWT (RFC 9068). */
export const GUEST_TOKEN_TYP = 'at+jwt';
/** Signing-key purpose of guest tokens. */
export const TOKEN_KEY_PURPOSE = 'token';
/** What a guest token allows: chat and listing agents, nothing else. */
export const GUEST_SCOPES = ['chat', 'agents:read'] as const;

/** The body of `POST /api/auth/guest-token` (spec §2.15). */
export interface IssuedGuestToken {
  token: string;
  expiresIn: number;
  guestId: string;
  tokenType: 'Bearer';
}

/** The claims of a verified guest token. */
export interface GuestClaims {
  guestId: string;
  jti: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
}

/** Options of {@link createGuestTokens}. */
export interface GuestTokenOptions {
  keys: SigningKeyStore;
  clock: Clock;
  /** `iss`: Plaza's public base URL. */
  issuer: string;
  /**
   * Other `iss` values accepted as this deployment's (tokens are still only those its own keys
   * signed). Default: none. See {@link localInstanceIssuers}.
   */
  alsoIssuer?: (iss: string) => boolean;
  /** `aud` of tokens for the token API. Default 'plaza-api'. */
  audience?: string;
  /** Lifetime in seconds (spec §3.3: 86400). */
  lifetimeSeconds?: number;
}

/** Issues and verifies guest access tokens. */
export interface GuestTokens {
  issue(): Promise<IssuedGuestToken>;
  /** Verifies a compact JWT; throws AuthError (with the jose error as `cause`) when it is not valid. */
  verify(token: string): Promise<GuestClaims>;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const VERIFIED_CACHE_MAX = 10_000;
const VERIFIED_CACHE_MS = 60_000;

/** Creates the guest-token service: EdDSA JWTs with `kid`, `typ` at+jwt, `iss`, `aud`, `sub`, `jti`. */
export function createGuestTokens(options: GuestTokenOptions): GuestTokens {
  const { keys, clock, issuer } = options;
  const alsoIssuer = options.alsoIssuer ?? (() => false);
  const audience = options.audience ?? 'plaza-api';
  const lifetime = options.lifetimeSeconds ?? 86_400;
  if (!URL.canParse(issuer)) throw new Error(`Guest token issuer must be a URL, got ${JSON.stringify(issuer)}`);
  if (!Number.isInteger(lifetime) || lifetime < 1) throw new Error('Guest token lifetime must be a positive integer');

  // A client sends the same token on every request: a verified token is remembered briefly (never
  // past its expiry), so the signature check is not repeated on each call.
  const verified = new Map<string, { claims: GuestClaims; until: number }>();

  return {
    async issue() {
      const key = await keys.activeKey(TOKEN_KEY_PURPOSE);
      const iat = Math.floor(clock.now() / 1000);
      const guestId = newId('gst', clock.now());
      const token = await new SignJWT({ scope: GUEST_SCOPES.join(' ') })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: GUEST_TOKEN_TYP })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(guestId)
        .setJti(randomToken(16))
        .setIssuedAt(iat)
        .setExpirationTime(iat + lifetime)
        .sign(key.privateKey);
      return { token, expiresIn: lifetime, guestId, tokenType: 'Bearer' };
    },

    async verify(token) {
      const hit = verified.get(token);
      if (hit && hit.until > clock.now()) return hit.claims;
      if (!JWT_SHAPE.test(token)) throw new AuthError('Malformed bearer token.');
      let header: ReturnType<typeof decodeProtectedHeader>;
      try {
        header = decodeProtectedHeader(token);
      } catch (error) {
        throw new AuthError('Malformed bearer token.', { cause: error });
      }
      // Checked before any key lookup: `alg: none`, HMAC confusion and foreign `typ` never get further.
      if (header.alg !== 'EdDSA') throw new AuthError('Unsupported token algorithm.');
      const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : undefined;
      if (typ !== GUEST_TOKEN_TYP && typ !== `application/${GUEST_TOKEN_TYP}`) throw new AuthError('Wrong token type.');
      if (typeof header.kid !== 'string' || header.kid === '') throw new AuthError('Token has no key id.');
      const published = await keys.publishedKey(header.kid);
      if (!published || published.purpose !== TOKEN_KEY_PURPOSE) throw new AuthError('Token signed by an unknown key.');
      try {
        const { payload } = await jwtVerify(token, published.key, {
          algorithms: ['EdDSA'],
          audience,
          typ: GUEST_TOKEN_TYP,
          currentDate: new Date(clock.now()),
          requiredClaims: ['sub', 'jti', 'iat', 'exp'],
          maxTokenAge: lifetime,
          clockTolerance: 5,
        });
        if (payload.iss !== issuer && !(typeof payload.iss === 'string' && alsoIssuer(payload.iss))) {
          throw new joseErrors.JWTClaimValidationFailed('unexpected "iss" claim value', payload, 'iss', 'check_failed');
        }
        // A guest holds at most the guest scopes, whatever a token claims (defence in depth: the
        // account routes behind other scopes take their subject for an account).
        const scopes =
          typeof payload.scope === 'string'
            ? payload.scope.split(' ').filter((scope) => (GUEST_SCOPES as readonly string[]).includes(scope))
            : [];
        const claims: GuestClaims = {
          guestId: payload.sub!,
          jti: payload.jti!,
          scopes,
          issuedAt: payload.iat!,
          expiresAt: payload.exp!,
        };
        if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
        verified.set(token, { claims, until: Math.min(clock.now() + VERIFIED_CACHE_MS, claims.expiresAt * 1000) });
        return claims;
      } catch (error) {
        throw new AuthError(describe(error), { cause: error });
      }
    },
  };
}

const LOCAL_ISSUER = /^http:\/\/localhost:\d{1,5}$/;

/**
 * With no PUBLIC_BASE_URL every instance names itself `http://localhost:<its port>`, so instances
 * on one machine (one port each) would refuse each other's guest tokens although they share the
 * keys that signed them. While the issuer is such a default, any instance's default is accepted;
 * with a public address set, only that address.
 */
export function localInstanceIssuers(issuer: string): ((iss: string) => boolean) | undefined {
  return LOCAL_ISSUER.test(issuer) ? (iss) => LOCAL_ISSUER.test(iss) : undefined;
}

function describe(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'Token expired; request a new guest token.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `Token claim "${error.claim}" is not valid here.`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'Token signature is not valid.';
  return 'Invalid bearer token.';
}

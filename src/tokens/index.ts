/** Token API credentials: guest JWTs and the bearer check that also accepts account API keys. */
export type { BearerVerifier, Principal } from './bearer.ts';
export { ACCOUNT_SCOPES, createBearerVerifier, requireScope } from './bearer.ts';
export type { GuestClaims, GuestTokenOptions, GuestTokens, IssuedGuestToken } from './guest-tokens.ts';
export {
  createGuestTokens,
  GUEST_SCOPES,
  GUEST_TOKEN_TYP,
  localInstanceIssuers,
  TOKEN_KEY_PURPOSE,
} from './guest-tokens.ts';

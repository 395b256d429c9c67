/** Accounts, API keys, browser sessions and self-service sign-in. */
export type { Account, AccountService, ApiKeyPrincipal } from './account-service.ts';
export { createAccountService } from './account-service.ts';
export { mintApiKey, parseApiKey } from './api-keys.ts';
export { bearerToken } from './bearer.ts';
export type { ApiKeyView, KeyManagement } from './key-management.ts';
export { createKeyManagement } from './key-management.ts';
export { assertAcceptablePassword, hashPassword, verifyPassword } from './passwords.ts';
export type { NewSession, SessionPrincipal, SessionService } from './sessions.ts';
export { createSessionService, SESSION_TTL_MS } from './sessions.ts';
export type { AccountView, SignInDeps, SignInService } from './sign-in.ts';
export {
  createSignInService,
  emailLimitKey,
  EMAILS_PER_ADDRESS_PER_MINUTE,
  LINK_TTL_MS,
  parseEmail,
  RESET_TTL_MS,
  safeNext,
} from './sign-in.ts';

/** Accounts and their API keys. */
export type { Account, AccountService, ApiKeyPrincipal } from './account-service.ts';
export { createAccountService } from './account-service.ts';
export { mintApiKey, parseApiKey } from './api-keys.ts';
export { bearerToken } from './bearer.ts';

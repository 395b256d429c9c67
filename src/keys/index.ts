/** Ed25519 signing keys shared by all instances (one active key per purpose) and their JWKS. */
export type {
  ActiveSigningKey,
  JwksDocument,
  PublishedKey,
  SigningKeyStore,
  SigningKeyStoreOptions,
} from './signing-key-store.ts';
export { createSigningKeyStore } from './signing-key-store.ts';

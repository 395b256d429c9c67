/**
 * The OAuth client side of an MCP client for tests, kept in memory (the official SDK v2 client's
 * OAuthClientProvider): the authorization URL is recorded, not opened, so a test drives the
 * consent itself (over HTTP, test/support/oauth.ts, or in Chromium).
 */
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';

/** Who the client says it is, and where its authorization answers go. */
export interface MemoryOAuthClient {
  /** The client's redirect URI (a loopback listener, or an address nobody opens). */
  redirect: string;
  /** `client_name` of its metadata (registration, or the document). */
  clientName: string;
  /** Its Client ID Metadata Document's URL; without one the client registers (DCR). */
  clientMetadataUrl?: string;
}

/** An in-memory OAuthClientProvider: what the SDK saves is kept on the object for the test to read. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  info: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl: string | undefined;
  readonly #client: MemoryOAuthClient;
  constructor(client: MemoryOAuthClient) {
    this.#client = client;
    this.clientMetadataUrl = client.clientMetadataUrl;
  }
  get redirectUrl() {
    return this.#client.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#client.clientName,
      redirect_uris: [this.#client.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

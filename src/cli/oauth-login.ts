import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

import { randomToken } from '../kernel/index.ts';
import type { StoredOAuth } from './credential-store.ts';

/** Options of browserLogin. */
export interface BrowserLoginOptions {
  /** The gateway endpoint to sign in for. */
  resource: string;
  /** Open the system browser (`xdg-open`, `open`); else only print the URL. */
  open: boolean;
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  /** Where the authorization URL is written for the user. */
  say: (line: string) => void;
}

/**
 * Signs an agent in through the browser (MCP authorization, RFC 8252): a loopback listener on
 * 127.0.0.1 (any free port) is the redirect URI; the MCP SDK's `auth` discovers Plaza from the
 * endpoint's 401, registers this client (DCR), and builds the PKCE authorization URL, which is
 * printed (and opened); the user signs in and picks the agent on Plaza's consent page; the code
 * that comes back (its `state` and `iss` checked) is redeemed for tokens bound to `resource`.
 */
export async function browserLogin(options: BrowserLoginOptions): Promise<{ token: string; oauth: StoredOAuth }> {
  const { auth, discoverOAuthProtectedResourceMetadata } = await import('@modelcontextprotocol/sdk/client/auth.js');
  const prm = await discoverOAuthProtectedResourceMetadata(options.resource);
  const issuer = prm.authorization_servers?.[0];
  if (!issuer)
    throw new Error(
      `${options.resource} names no authorization server: this Plaza offers no sign-in (PLAZA_OAUTH=0); use --token.`,
    );

  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const redirect = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const state = randomToken(16);
    let client: OAuthClientInformationMixed | undefined;
    let tokens: OAuthTokens | undefined;
    let verifier = '';
    const provider: OAuthClientProvider = {
      redirectUrl: redirect,
      clientMetadata: {
        client_name: 'plaza mcp connect',
        redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      } as OAuthClientMetadata,
      state: () => state,
      clientInformation: () => client,
      saveClientInformation: (info) => void (client = info),
      tokens: () => tokens,
      saveTokens: (saved) => void (tokens = saved),
      saveCodeVerifier: (saved) => void (verifier = saved),
      codeVerifier: () => verifier,
      redirectToAuthorization: (url) => {
        options.say(`plaza: sign in and choose the agent in your browser: ${url.href}`);
        if (options.open) openBrowser(url.href);
      },
    };
    const callback = waitForCallback(server, options.timeoutMs);
    if ((await auth(provider, { serverUrl: options.resource })) !== 'REDIRECT')
      throw new Error('the authorization server did not ask for a sign-in');
    const params = await callback;
    if (params.get('state') !== state)
      throw new Error("the browser came back with another sign-in's state: start again");
    // RFC 9207: an answer from another authorization server (a mix-up) is not redeemed.
    if (params.get('iss') !== issuer)
      throw new Error(`the answer came from ${params.get('iss') ?? 'an unnamed server'}, not ${issuer}: start again`);
    const code = params.get('code');
    if (!code)
      throw new Error(
        `the sign-in was not completed: ${params.get('error') ?? 'no code'}${params.get('error_description') ? ` (${params.get('error_description')})` : ''}`,
      );
    if ((await auth(provider, { serverUrl: options.resource, authorizationCode: code })) !== 'AUTHORIZED' || !tokens)
      throw new Error('the code was not exchanged for tokens');
    const got = tokens as OAuthTokens;
    if (!got.refresh_token || !client) throw new Error('the authorization server issued no refresh token');
    return {
      token: got.access_token,
      oauth: {
        resource: options.resource,
        issuer,
        clientId: client.client_id,
        refreshToken: got.refresh_token,
        expiresAt: Date.now() + (got.expires_in ?? 900) * 1000,
      },
    };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** The query of the first request to `/callback`, answered with a line for the browser's tab. */
async function waitForCallback(server: ReturnType<typeof createServer>, timeoutMs: number): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback') return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end(
          url.searchParams.has('code')
            ? 'Signed in: you can close this tab and go back to your terminal.'
            : 'The sign-in was not completed: see your terminal.',
        );
      clearTimeout(timer);
      resolve(url.searchParams);
    });
  });
}

/** Opens `url` in the system browser, best effort: the URL is printed in any case. */
function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(command, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => undefined);
  child.unref();
}

/**
 * Renews an access token with the stored refresh token (rotated: the new one replaces it). Throws
 * when the authorization server refuses (the agent revoked, the client disconnected).
 */
export async function refreshOAuth(oauth: StoredOAuth): Promise<{ token: string; oauth: StoredOAuth }> {
  const { discoverAuthorizationServerMetadata, refreshAuthorization } =
    await import('@modelcontextprotocol/sdk/client/auth.js');
  const metadata = await discoverAuthorizationServerMetadata(oauth.issuer);
  const tokens = await refreshAuthorization(oauth.issuer, {
    metadata,
    clientInformation: { client_id: oauth.clientId },
    refreshToken: oauth.refreshToken,
    resource: new URL(oauth.resource),
  });
  return {
    token: tokens.access_token,
    oauth: {
      ...oauth,
      refreshToken: tokens.refresh_token ?? oauth.refreshToken,
      expiresAt: Date.now() + (tokens.expires_in ?? 900) * 1000,
    },
  };
}

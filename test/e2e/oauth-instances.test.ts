/**
 * MCP authorization across instances (issue 34): two Plazas on one database behind a round-robin
 * balancer with no stickiness. One authorization flow (registration, authorize, sign-in redirect,
 * consent, token) crosses both instances and works, since its records live in the database and the
 * cookie keys derive from the secret the instances share; the token works on both; revoking the
 * agent on one ends the token on the other within 5 s. A token granted without the `mcp` scope is
 * answered 403 insufficient_scope, naming the scope to ask for. Runs on PGlite and, when
 * TEST_DATABASE_URL is set, PostgreSQL (with TEST_REDIS_URL's Redis when set).
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService, createSessionService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { approveInBrowser } from '../support/oauth.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../support/round-robin-proxy.ts';

const REDIRECT = 'http://127.0.0.1:49997/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

describe.each(BACKENDS)('MCP authorization on two instances behind a balancer, on %s', (backend) => {
  const backends: string[] = [];
  let proxy: RoundRobinProxy;
  let a: TestPlaza;
  let b: TestPlaza;
  let apiKey = '';
  let session = { token: '', csrfToken: '' };
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;

  beforeAll(async () => {
    proxy = await startRoundRobinProxy(backends);
    // With PostgreSQL, Redis too when there is one (shared limits), as in production.
    const redis: Record<string, string> =
      backend === 'postgres' && process.env['TEST_REDIS_URL'] ? { REDIS_URL: process.env['TEST_REDIS_URL'] } : {};
    const env = { PUBLIC_BASE_URL: proxy.url, PLAZA_BACKGROUND: '0', ...redis };
    a = await startTestPlaza(backend, { env });
    b = await startTestPlaza(backend, { env, db: a.db });
    backends.push(a.url, b.url);
    const account = await createAccountService({ prisma: a.db.prisma, clock: systemClock }).createAccount({
      email: 'two@example.com',
    });
    apiKey = account.apiKey;
    session = await createSessionService({ prisma: a.db.prisma, clock: systemClock }).create(account.account.id);
    const issuer = new URL(proxy.url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          application_type: 'native',
        } as never,
        insecure,
      ),
    );
    client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
  }, 60_000);

  afterAll(async () => {
    await proxy?.close();
    await b?.close();
    await a?.close();
  });

  async function tokens(scope: string, agentName: string): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: `${proxy.url}/mcp`,
    }).toString();
    const callback = await approveInBrowser(proxy.url, url, REDIRECT, {
      session,
      agent: 'new',
      displayName: agentName,
    });
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, {
      additionalParameters: { resource: `${proxy.url}/mcp` },
      ...insecure,
    });
    return (await response.json()) as oauth.TokenEndpointResponse;
  }

  async function ping(base: string, token: string): Promise<Response> {
    return fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
  }

  it('runs one flow across both instances; the token works on each, and revoking the agent on one ends it on the other within 5 s', async () => {
    proxy.log.length = 0;
    const granted = await tokens('mcp', 'Two-instance agent');
    expect(granted.access_token).toBeTruthy();
    const served = new Set(
      proxy.log.filter((r) => r.path.startsWith('/oauth/') || r.path.startsWith('/connect/')).map((r) => r.backend),
    );
    expect(served).toEqual(new Set([0, 1]));
    expect((await ping(a.url, granted.access_token)).status).toBe(200);
    expect((await ping(b.url, granted.access_token)).status).toBe(200);

    const agents = (await (
      await fetch(`${a.url}/api/agents`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { data: { agents: Array<{ id: string; display_name: string }> } };
    const agent = agents.data.agents.find((x) => x.display_name === 'Two-instance agent')!;
    expect(
      (
        await fetch(`${a.url}/api/agents/${agent.id}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}` },
        })
      ).status,
    ).toBe(200);
    expect((await ping(a.url, granted.access_token)).status).toBe(401);
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await ping(b.url, granted.access_token)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });

  it('answers a token granted without the mcp scope 403 insufficient_scope, naming the scope and the metadata', async () => {
    const granted = await tokens('openid', 'Scopeless agent');
    expect(granted.access_token).toBeTruthy();
    // Its ID token is signed with the `oauth` key of Plaza's key store, published in Plaza's JWKS.
    expect(as.jwks_uri).toBe(`${proxy.url}/.well-known/jwks.json`);
    const { payload, protectedHeader } = await jwtVerify(granted.id_token!, createRemoteJWKSet(new URL(as.jwks_uri!)), {
      issuer: proxy.url,
      audience: client.client_id,
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: expect.stringMatching(/^oauth_/) });
    expect(payload.sub).toMatch(/^agt_/);
    const res = await ping(proxy.url, granted.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(
      new RegExp(
        `^Bearer realm="plaza", resource_metadata="${proxy.url}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="mcp", error_description="`,
      ),
    );
  });
});

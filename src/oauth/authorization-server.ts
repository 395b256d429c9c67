import { hkdfSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import Provider, { type Configuration, errors, interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';

import type { FetchLike } from '../../probes/index.ts';
import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { ActiveSigningKey, SigningKeyStore } from '../keys/index.ts';
import type { Logger } from '../log/index.ts';
import { createRecordAdapterFactory } from './record-adapter.ts';
import { type GatewayResources, MCP_SCOPE } from './resources.ts';

/** Purpose of the signing key of the authorization server's ID tokens (published in the JWKS). */
export const OAUTH_KEY_PURPOSE = 'oauth';

/** Where the consent page of an authorization request is: `/connect/<interaction uid>`. */
export const CONSENT_PATH = '/connect';

/** Options of createAuthorizationServer. */
export interface AuthorizationServerOptions {
  /** PUBLIC_BASE_URL: the issuer. */
  issuer: string;
  resources: GatewayResources;
  prisma: PrismaClient;
  clock: Clock;
  keys: SigningKeyStore;
  /** The secret every instance shares, from which the provider's cookie keys are derived. */
  sharedSecret: () => Promise<Buffer>;
  /** The SSRF-guarded fetch through which client metadata documents are read. */
  fetch: FetchLike;
  /** Largest client metadata document read, in bytes. */
  cimdMaxBytes: number;
  /** Access token lifetime in seconds. */
  accessTokenTtlS: number;
  /** The HTML of the page shown when the browser cannot be sent back to the client. */
  errorPage: (
    request: { acceptLanguage: string | undefined; cookie: string | undefined },
    out: { error?: string; error_description?: string },
  ) => string;
  /** Express's `trust proxy` is on: a client's X-Forwarded-For is kept (the provider's idea of its address). */
  behindProxy: boolean;
  log: Logger;
}

/** Plaza's OAuth 2.1 authorization server (oidc-provider), built once per instance on first use. */
export interface AuthorizationServer {
  /** The provider, built on first use (its keys and cookie secret come from the database). */
  provider(): Promise<Provider>;
  /**
   * The provider's own endpoints as a plain Node handler (metadata, authorize, token, register,
   * revoke, jwks); a request for a path it has no route for is left unanswered (`res.headersSent`
   * stays false), for the caller's 404.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** The refresh token's and grant's lifetime: a client that stays away longer signs in again. */
const REFRESH_TTL_S = 30 * 86_400;

/**
 * Builds the authorization server. The choices that matter to a client: authorization code with
 * PKCE S256 only, public clients (`token_endpoint_auth_method: none`) as well as confidential
 * ones, clients identified by a metadata document URL (CIMD, preferred) or registered (RFC 7591),
 * opaque access tokens bound to exactly one gateway resource (RFC 8707; `/mcp` when a client names
 * none), refresh tokens issued to every client allowed the grant, rotated on every use, and a
 * refresh token used twice revokes its whole grant. The subject (`sub`, the provider's accountId)
 * of every grant is an agent id: the consent page binds the client to one of the account's agents.
 */
export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  const { issuer, resources, prisma, clock } = options;
  const issuerUrl = new URL(issuer);
  let built: { kid: string; provider: Promise<Provider>; callback?: ReturnType<Provider['callback']> } | undefined;

  async function build(key: ActiveSigningKey): Promise<Provider> {
    const privateJwk = { ...key.privateKeyObject.export({ format: 'jwk' }), kid: key.kid, alg: 'EdDSA', use: 'sig' };
    const cookieKey = Buffer.from(
      hkdfSync('sha256', await options.sharedSecret(), Buffer.alloc(0), 'plaza oauth cookies', 32),
    ).toString('base64url');
    const configuration: Configuration = {
      adapter: createRecordAdapterFactory(prisma, clock),
      clients: [],
      jwks: { keys: [privateJwk as never] },
      cookies: { keys: [cookieKey] },
      findAccount: async (_ctx, sub) => {
        if (sub.length > 128 || sub.includes('\u0000')) return undefined;
        const agent = await prisma.agent.findUnique({ where: { id: sub }, select: { status: true } });
        if (agent?.status !== 'active') return undefined;
        return { accountId: sub, claims: () => ({ sub }) };
      },
      // `mcp` is the gateway resources' scope (getResourceServerInfo); it is listed here too because
      // client registrations (DCR, CIMD) naming it are checked against this list.
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      pkce: { required: () => true },
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'EdDSA',
      },
      enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
      // Browser-based MCP clients (the Inspector) call the token endpoint from their own origin.
      clientBasedCORS: () => true,
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      // A client's tokens live by their own lifetimes and their grant, never by the provider's
      // browser session: that session only carried the consent (its default would end the tokens
      // of a client without offline_access an hour after sign-in, or when the same browser signs
      // in as another agent).
      expiresWithSession: () => false,
      rotateRefreshToken: () => true,
      ttl: {
        AccessToken: options.accessTokenTtlS,
        AuthorizationCode: 60,
        IdToken: 3600,
        Interaction: 600,
        Session: 3600,
        Grant: REFRESH_TTL_S,
        RefreshToken: REFRESH_TTL_S,
      },
      interactions: {
        url: (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}`,
        policy: everyAuthorizationAsks(),
      },
      routes: {
        authorization: '/oauth/authorize',
        token: '/oauth/token',
        registration: '/oauth/register',
        revocation: '/oauth/revoke',
        // Plaza's own JWKS, which keeps a rotated key published while what it signed is valid.
        jwks: '/.well-known/jwks.json',
        end_session: '/oauth/session/end',
        userinfo: '/oauth/userinfo',
        introspection: '/oauth/introspect',
        pushed_authorization_request: '/oauth/par',
        code_verification: '/oauth/device',
        device_authorization: '/oauth/device/auth',
        backchannel_authentication: '/oauth/backchannel',
        challenge: '/oauth/challenge',
      },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
        resourceIndicators: {
          enabled: true,
          // A client that names no resource gets a token for /mcp, the aggregate endpoint.
          defaultResource: (_ctx, _client, oneOf) => oneOf ?? resources.resourceOf({}),
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => {
            if (resources.targetOf(resource) === undefined)
              throw new errors.InvalidTarget(
                `${resource} is not a Plaza gateway endpoint (${resources.resourceOf({})} or ${resources.resourceOf({ provider: '<provider>' })})`,
              );
            return {
              scope: MCP_SCOPE,
              audience: resource,
              accessTokenTTL: options.accessTokenTtlS,
              accessTokenFormat: 'opaque',
            };
          },
        },
      },
      fetch: (url, init) => {
        // oidc-provider's own dispatcher is dropped: Plaza's guard checks every address (and lets
        // loopback through only with PLAZA_ALLOW_PRIVATE_TARGETS).
        const { dispatcher: _ignored, ...rest } = init as RequestInit & { dispatcher?: unknown };
        return options.fetch(url instanceof Request ? url.url : url, rest);
      },
      fetchResponseBodyLimits: { 'client_id metadata document': options.cimdMaxBytes },
      renderError: (ctx, out) => {
        ctx.type = 'html';
        ctx.set('Cache-Control', 'no-store');
        ctx.set(
          'Content-Security-Policy',
          "default-src 'self'; frame-ancestors 'none'; form-action 'none'; object-src 'none'; base-uri 'none'",
        );
        ctx.body = options.errorPage(
          { acceptLanguage: ctx.get('accept-language') || undefined, cookie: ctx.get('cookie') || undefined },
          out as { error?: string; error_description?: string },
        );
      },
    };
    const provider = new Provider(issuer, configuration);
    // Believed only because handle() sets the forwarded host and scheme itself (the issuer's).
    provider.proxy = true;
    wirePlazaEdges(provider, options.log);
    return provider;
  }

  /**
   * The provider for the `oauth` key active now: rebuilt when the key store's active key changes
   * (a rotation, seen within the store's cache time), which loses nothing (its state is in the
   * database) but the per-instance cache of client metadata documents.
   */
  async function current(): Promise<NonNullable<typeof built>> {
    const key = await options.keys.activeKey(OAUTH_KEY_PURPOSE);
    if (built?.kid !== key.kid) {
      const next: NonNullable<typeof built> = { kid: key.kid, provider: build(key) };
      next.provider.catch(() => {
        if (built === next) built = undefined;
      });
      built = next;
    }
    return built;
  }
  return {
    provider: async () => (await current()).provider,
    async handle(req, res) {
      const entry = await current();
      const callback = (entry.callback ??= (await entry.provider).callback());
      // oidc-provider builds its endpoint URLs from the request's host and scheme: they are pinned
      // to the issuer's, so the metadata names the issuer's endpoints whatever Host a request
      // carried (another name of this machine, a forged header) and behind a TLS-ending proxy.
      req.headers.host = issuerUrl.host;
      req.headers['x-forwarded-host'] = issuerUrl.host;
      req.headers['x-forwarded-proto'] = issuerUrl.protocol.slice(0, -1);
      if (!options.behindProxy) delete req.headers['x-forwarded-for'];
      await callback(req, res);
    },
  };
}

/**
 * The provider's interaction policy, with one check more: every authorization request goes to
 * Plaza's consent page, where the account signed in to Plaza now picks the agent. The provider's
 * own session and a client's earlier grant would otherwise answer a client's next request with a
 * code at once, for the agent picked before, even after that account signed out of Plaza or
 * another one signed in. `prompt=none` is answered `login_required`: nothing is granted unseen.
 */
function everyAuthorizationAsks(): ReturnType<typeof interactionPolicy.base> {
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.push(
      new interactionPolicy.Check(
        'plaza_consent',
        'every authorization is confirmed on the consent page by the signed-in account holder',
        (ctx) =>
          ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  return policy;
}

/**
 * What Plaza adds around the provider: its answers' security policy, a path it has no route for
 * left to Plaza's 404, and its refusals and failures in Plaza's log.
 */
function wirePlazaEdges(provider: Provider, log: Logger): void {
  provider.use(async (ctx, next) => {
    // The API's policy, with a script-src the provider adds its one inline script's hash to (the
    // auto-submitting form of response_mode=form_post): without the directive it adds none and
    // the browser, blocking the script, shows a blank page. 'report-sample' allows nothing itself.
    ctx.set('Content-Security-Policy', "default-src 'none'; script-src 'report-sample'; frame-ancestors 'none'");
    await next();
    // A path the provider has no route for is left unanswered: Plaza's own 404 answers it, in the
    // site's error shape with a request id (Koa's would be a bare text "Not Found").
    if (ctx.status === 404 && ctx.body === undefined) ctx.respond = false;
  });
  provider.on('server_error', (_ctx: KoaContextWithOIDC, error: Error) =>
    log.error({ err: error }, 'oauth: server error'),
  );
  // What the client is told is generic ("metadata document fetch failed"); the operator's log
  // says why (too large, too slow, a private address), which the provider keeps as the cause.
  const refused = (what: string) => (_ctx: KoaContextWithOIDC, error: Error & { error_description?: string }) =>
    log.info(
      { oauthError: error.message, description: error.error_description, cause: causeText(error.cause) },
      `oauth: ${what} refused`,
    );
  provider.on('authorization.error', refused('authorization'));
  provider.on('grant.error', refused('token request'));
  provider.on('registration_create.error', refused('registration'));
}

/** The message of an error's cause chain (a fetch failure's SsrfError, a timeout), for the log. */
function causeText(cause: unknown): string | undefined {
  const parts: string[] = [];
  for (let c = cause, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) parts.push(c.message);
  return parts.length > 0 ? parts.join(': ') : undefined;
}

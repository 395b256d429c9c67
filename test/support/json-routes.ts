/**
 * Plaza's HTTP routes as a fuzzing table: for each route its surface (error shape), what a 2xx
 * carries, near-valid values of its path parameters, query and body, and one request it accepts
 * and one it refuses. `test/e2e/json-routes-fuzz.test.ts` fuzzes every entry and checks that the
 * table matches the routes the app registered, so a new route without an entry fails.
 */
import fc from 'fast-check';

import { nastyValue, near, type RouteFuzz } from './fuzz-requests.ts';

/** What the fixtures of a fuzzing run made (ids, tokens), for near-valid values and examples. */
export interface FuzzContext {
  /** Account A: the API key, agent and main session belong to it. */
  email: string;
  password: string;
  endpointId: string;
  /** Listings of account A (made with its API key): one the fuzzer changes, one it removes. */
  ownedEndpointId: string;
  endpointToRemove: string;
  agentToRevoke: string;
  /** An agent whose token the fuzzing may replace over and over (never revoked). */
  agentToRotate: string;
  /** An OAuth grant of `agentToRotate` (a client approved on the consent page), for its disconnect route. */
  grantToDisconnect: string;
  keyToDelete: string;
  callId: string;
  sourceId: string;
  /** Unused sign-in link tokens, one per verify route (`page`: the form of the page the link opens). */
  linkTokens: { get: string; post: string; page: string };
  resetToken: string;
  /** A reset token for the page form (POST /reset-password). */
  pageResetToken: string;
  treeSize: number;
}

/** One route of the table. */
export interface JsonRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path as registered (`:name` parameters). */
  path: string;
  /** The router entry when it is not `METHOD path` (static files are middleware). */
  registered?: string;
  /** The known-good example's status when it is not a 2xx (a form post answered by a redirect). */
  goodStatus?: number;
  /** Which error shape its 4xx use (src/http/error-table.ts). */
  surface: 'website' | 'token';
  /** What a 2xx carries: JSON, JSON lines, an HTML page (errors may be HTML pages too), any file, or JSON or SSE. */
  kind: 'json' | 'ndjson' | 'html' | 'file' | 'json-or-sse';
  /** The signed-in session its `session` credential uses: `logout` has its own, since it ends it. */
  session?: 'main' | 'logout';
  fuzz(ctx: FuzzContext): RouteFuzz;
}

/** Registered routes that are fuzzed elsewhere, with where. */
export const FUZZED_ELSEWHERE: Record<string, string> = {
  'ALL /mcp': 'test/e2e/mcp-fuzz.test.ts (JSON-RPC, batches, wrong ids, huge params)',
  'ALL /mcp/p/:provider': 'test/e2e/mcp-fuzz.test.ts',
  // A fixed 404 naming the Chat Completions route: it reads nothing of the request.
  'ALL /api/v1/responses': 'test/integration/token-api.test.ts (a fixed 404)',
  'ALL /api/v1/responses/{*rest}': 'test/integration/token-api.test.ts (a fixed 404)',
};

const text = (max: number, min = 0) => fc.string({ minLength: min, maxLength: max });
const slug = fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}$/);
const intString = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }).map(String),
    fc.constantFrom('0', '-1', '1.5', 'abc', '1e3', '', '99999999999999999999'),
  );
const iso = fc.oneof(
  fc.date({ min: new Date(2020, 0, 1), max: new Date(2030, 0, 1), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-13-01T00:00:00Z', 'yesterday', ''),
);
const anyJson = fc.oneof(fc.constant({}), nastyValue);

const CATALOG = (resource: string): JsonRoute => ({
  method: 'GET',
  path: `/api/${resource}`,
  surface: 'website',
  kind: 'json',
  // A catalog accepts every request (an unknown locale falls back): there is nothing to refuse.
  fuzz: () => ({
    query: near({ locale: fc.constantFrom('en', 'zh-CN', 'fr', 'zh') }),
    good: { query: 'locale=zh-CN' },
  }),
});

const PAGE = (path: string, fuzz: (ctx: FuzzContext) => Partial<RouteFuzz> = () => ({})): JsonRoute => ({
  method: 'GET',
  path,
  surface: 'website',
  kind: 'html',
  fuzz: (ctx) => ({
    accepts: fc.constantFrom(undefined, 'text/html', 'text/html,application/xhtml+xml', 'application/json', '*/*'),
    query: near({ locale: fc.constantFrom('en', 'zh-CN', 'xx') }),
    good: { accept: 'text/html' },
    ...fuzz(ctx),
  }),
});

const listingFields = {
  provider: slug,
  url: slug.map((s) => `http://127.0.0.1:9/${s}`),
  registered_by: fc.constantFrom('ops@example.com', 'other@example.com'),
  agin_support: fc.boolean(),
  summary: text(200, 1),
  audience: text(50),
  required_credentials: fc.array(
    fc.oneof(text(20, 1), near({ name: text(20, 1), description: text(50), required: fc.boolean() }, ['name'])),
    { maxLength: 3 },
  ),
  purpose: text(50),
  risk: text(50),
};
// A change names no provider or url (those are refused), and clears optional text with null.
const listingChangeFields = {
  registered_by: listingFields.registered_by,
  agin_support: listingFields.agin_support,
  summary: listingFields.summary,
  audience: fc.oneof(text(50), fc.constant(null)),
  required_credentials: listingFields.required_credentials,
  purpose: fc.oneof(text(50), fc.constant(null)),
  risk: listingFields.risk,
};
const sourceFields = {
  package_id: fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}$/),
  name: text(40, 1),
  version: fc.constantFrom('1.0.0', '0.1.0-beta', '2'),
  summary: text(100),
  vendor_name: text(40, 1),
  download_uri: slug.map((s) => `https://packages.invalid/${s}.agpk`),
  sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
};
const goodSource = {
  package_id: 'fuzz.good',
  name: 'Fuzz',
  version: '1.0.0',
  vendor_name: 'Fuzz Co',
  download_uri: 'https://packages.invalid/fuzz-good.agpk',
  sha256: 'a'.repeat(64),
};
const receiptFilter = {
  agin_id: text(20),
  tool: fc.constantFrom('act', 'nope'),
  provider: fc.constantFrom('recorder', 'nope'),
  status: fc.constantFrom('ok', 'error', 'maybe'),
  since: iso,
  until: iso,
};
const formFields = {
  form: fc.constantFrom('intent', 'lead', 'other'),
  prompt: text(100),
  email: fc.constantFrom('form@example.com', 'nope'),
  scenario: fc.constantFrom('developer', 'growth', 'nope'),
  company: text(50),
  painPoint: text(50),
  teamSize: text(10),
};
const toForm = (o: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(o).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]),
  ).toString();

/** Every route Plaza serves besides the MCP endpoints (see FUZZED_ELSEWHERE). */
export const JSON_ROUTES: JsonRoute[] = [
  { method: 'GET', path: '/health', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  CATALOG('products'),
  CATALOG('scenarios'),
  CATALOG('plans'),
  CATALOG('manifesto'),
  {
    method: 'POST',
    path: '/api/agent/intent',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near({ prompt: text(300, 1) }, ['prompt']),
      good: { body: '{"prompt":"Automate our invoices"}' },
      bad: { body: '{"prompt":""}' },
    }),
  },
  {
    method: 'POST',
    path: '/api/leads',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near(
        {
          email: fc.constantFrom('fuzz@example.com', 'lead@example.org'),
          scenario: fc.constantFrom('enterprise', 'commerce', 'developer', 'growth'),
          company: text(50),
          painPoint: text(50),
          currentTools: text(50),
          desiredAutomation: text(50),
          teamSize: text(10),
        },
        ['email', 'scenario'],
      ),
      good: { body: '{"email":"fuzz@example.com","scenario":"developer"}' },
      bad: { body: '{"email":"nope","scenario":"developer"}' },
    }),
  },
  {
    method: 'GET',
    path: '/agpk/v1/:file',
    surface: 'website',
    kind: 'file',
    fuzz: () => ({
      params: { file: fc.constantFrom('schema.json', 'sdk.md', 'catalog.schema.json', 'firstparty-catalog.json') },
      good: { params: { file: 'schema.json' } },
      bad: { params: { file: 'nope.json' } },
    }),
  },
  { method: 'GET', path: '/agpk/v1', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  { method: 'GET', path: '/agpk/v1/', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  {
    method: 'GET',
    path: '/api/account',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: { auth: 'api-key' }, bad: { auth: 'guest' } }),
  },
  { method: 'GET', path: '/.well-known/jwks.json', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  // MCP authorization (issue 34): the metadata documents, and the consent page of an authorization.
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: {} }),
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/mcp',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: {} }),
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/mcp/p/:provider',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      params: { provider: fc.oneof(slug, fc.constantFrom('X', '-a', 'a'.repeat(80))) },
      good: { params: { provider: 'everything' } },
      bad: { params: { provider: 'Not_A_Slug' } },
    }),
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: {} }),
  },
  // Only an authorization in progress in this browser has a consent page: without one, every request
  // (the known-good one too) gets the page saying the request expired, 400.
  {
    ...PAGE('/connect/:uid', () => ({ params: { uid: fc.oneof(fc.stringMatching(/^[\w-]{1,64}$/), text(80)) } })),
    goodStatus: 400,
  },
  {
    method: 'POST',
    path: '/connect/:uid',
    surface: 'website',
    kind: 'html',
    goodStatus: 400,
    fuzz: () => ({
      params: { uid: fc.oneof(fc.stringMatching(/^[\w-]{1,64}$/), text(80)) },
      wire: fc.oneof(
        {
          weight: 4,
          arbitrary: near({
            csrf_token: text(40),
            decision: fc.constantFrom('approve', 'deny', ''),
            agent: fc.constantFrom('new', 'agt_nope'),
            display_name: text(130),
            owner_context: text(210),
          }).map(toForm),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
      ),
      contentTypes: fc.constantFrom<string | undefined>(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
        undefined,
      ),
      accepts: fc.constantFrom<string | undefined>('text/html', 'application/json', undefined),
      good: {
        params: { uid: 'unknown-interaction' },
        body: 'decision=deny',
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
    }),
  },
  {
    method: 'POST',
    path: '/api/agents',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({
      body: near({ display_name: text(150, 1), owner_context: text(250, 1) }, ['display_name']),
      good: { auth: 'api-key', body: '{"display_name":"Fuzz"}' },
      bad: { auth: 'guest', body: '{"display_name":"Fuzz"}' },
    }),
  },
  {
    method: 'GET',
    path: '/api/agents/:id/clients',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRotate, ctx.agentToRevoke, 'agt_nope') },
      good: { auth: 'api-key', params: { id: ctx.agentToRotate } },
      bad: { auth: 'guest', params: { id: ctx.agentToRotate } },
    }),
  },
  {
    method: 'POST',
    path: '/api/agents/:id/clients/:grant/disconnect',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: {
        id: fc.constantFrom(ctx.agentToRotate, 'agt_nope'),
        grant: fc.constantFrom(ctx.grantToDisconnect, 'nope', ''),
      },
      good: { auth: 'session', params: { id: ctx.agentToRotate, grant: ctx.grantToDisconnect } },
      bad: { auth: 'session-no-csrf', params: { id: ctx.agentToRotate, grant: ctx.grantToDisconnect } },
    }),
  },
  {
    method: 'POST',
    path: '/api/agents/:id/token',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRotate, 'agt_nope') },
      good: { auth: 'session', params: { id: ctx.agentToRotate } },
      bad: { auth: 'session-no-csrf', params: { id: ctx.agentToRotate } },
    }),
  },
  {
    method: 'POST',
    path: '/api/agents/:id/revoke',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRevoke, 'agt_nope') },
      good: { auth: 'api-key', params: { id: ctx.agentToRevoke } },
      bad: { auth: 'api-key', params: { id: 'agt_nope' } },
    }),
  },
  {
    method: 'GET',
    path: '/api/agents/:id/policy',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRotate, 'agt_nope') },
      good: { auth: 'session', params: { id: ctx.agentToRotate } },
      bad: { auth: 'guest', params: { id: ctx.agentToRotate } },
    }),
  },
  {
    method: 'PUT',
    path: '/api/agents/:id/policy',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRotate, 'agt_nope') },
      body: near({
        default: fc.constantFrom('allow', 'deny', 'maybe'),
        rules: fc.array(
          fc.record({
            effect: fc.constantFrom('allow', 'deny', 'x'),
            provider: text(40),
            tool: text(40),
          }),
          { maxLength: 5 },
        ),
        limits: fc.record({ per_minute: fc.integer({ min: -1, max: 10 }) }),
      }),
      // Allows everything: the fuzzing of the other routes keeps working with this agent.
      good: {
        auth: 'api-key',
        params: { id: ctx.agentToRotate },
        body: '{"rules":[{"effect":"allow","provider":"*","tool":"*"}]}',
      },
      bad: {
        auth: 'api-key',
        params: { id: ctx.agentToRotate },
        body: '{"rules":[{"effect":"allow","provider":"","tool":"*"}]}',
      },
    }),
  },
  {
    method: 'DELETE',
    path: '/api/agents/:id/policy',
    surface: 'token',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.agentToRotate, 'agt_nope') },
      good: { auth: 'session', params: { id: ctx.agentToRotate } },
      bad: { auth: 'session-no-csrf', params: { id: ctx.agentToRotate } },
    }),
  },
  {
    method: 'GET',
    path: '/api/account/agent-policy',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({
      good: { auth: 'api-key' },
      bad: { auth: 'guest' },
    }),
  },
  {
    method: 'PUT',
    path: '/api/account/agent-policy',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({
      body: near({
        default_policy: fc.constantFrom(null, { rules: [] }, { rules: 'x' }),
        limits: fc.record({ per_day: fc.integer({ min: -1, max: 1_000_000 }) }),
      }),
      // No limits: the fuzzing of the gateway routes is never refused by a ceiling.
      good: { auth: 'api-key', body: '{"default_policy":null,"limits":{}}' },
      bad: { auth: 'api-key', body: '{"limits":{"per_hour":1}}' },
    }),
  },
  {
    method: 'POST',
    path: '/api/auth/guest-token',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({ body: anyJson, good: { body: '{}' }, bad: { body: '{"scope":"admin"}' } }),
  },
  {
    method: 'GET',
    path: '/api/v1/models',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({ good: { auth: 'guest' }, bad: {} }),
  },
  {
    method: 'GET',
    path: '/api/v1/models/:model',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({
      params: { model: fc.oneof(fc.constant('plaza-assistant'), text(40, 1)) },
      good: { auth: 'guest', params: { model: 'plaza-assistant' } },
      bad: { auth: 'guest', params: { model: 'gpt-nope' } },
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/chat/completions',
    surface: 'token',
    kind: 'json-or-sse',
    fuzz: () => ({
      body: near(
        {
          model: fc.constantFrom('plaza-assistant', 'gpt-4o', ''),
          messages: fc.array(
            near(
              {
                role: fc.constantFrom('user', 'system', 'assistant', 'tool'),
                content: fc.oneof(
                  text(100),
                  fc.array(near({ type: fc.constant('text'), text: text(50) }, ['type', 'text']), { maxLength: 2 }),
                ),
                name: text(10),
              },
              ['role', 'content'],
            ),
            { minLength: 1, maxLength: 3 },
          ),
          stream: fc.boolean(),
          max_tokens: fc.integer({ min: 1, max: 64 }),
          temperature: fc.double({ min: 0, max: 2, noNaN: true }),
          stop: fc.oneof(text(5), fc.array(text(5), { maxLength: 5 })),
          n: fc.constantFrom(1, 2),
        },
        ['model', 'messages'],
      ),
      good: {
        auth: 'guest',
        body: '{"model":"plaza-assistant","messages":[{"role":"user","content":"What is Plaza?"}],"max_tokens":32}',
      },
      bad: { auth: 'guest', body: '{"model":"plaza-assistant"}' },
    }),
  },
  {
    method: 'GET',
    path: '/api/agents',
    surface: 'token',
    kind: 'json',
    fuzz: () => ({ good: { auth: 'api-key' }, bad: {} }),
  },
  {
    method: 'POST',
    path: '/api/mcp/listings',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near(listingFields, ['provider', 'url', 'registered_by', 'summary']),
      good: {
        body: JSON.stringify({
          provider: 'fuzz-good',
          url: 'http://127.0.0.1:9/fuzz-good',
          registered_by: 'ops@example.com',
          summary: 'A listing the fuzzer accepts.',
        }),
      },
      bad: { body: '{"provider":"Bad Slug","url":"ftp://x","registered_by":"x","summary":""}' },
    }),
  },
  {
    method: 'PATCH',
    path: '/api/mcp/listings/:id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.ownedEndpointId, ctx.endpointId, 'mcp_nope000000') },
      body: near(listingChangeFields),
      good: { auth: 'api-key', params: { id: ctx.ownedEndpointId }, body: '{"summary":"Changed by the fuzzer."}' },
      bad: { auth: 'api-key', params: { id: ctx.ownedEndpointId }, body: '{"url":"http://127.0.0.1:9/elsewhere"}' },
    }),
  },
  {
    method: 'DELETE',
    path: '/api/mcp/listings/:id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.endpointToRemove, ctx.endpointId, 'mcp_nope000000') },
      good: { auth: 'api-key', params: { id: ctx.endpointToRemove } },
      // The gateway's listing is anonymous: nobody may remove it.
      bad: { auth: 'api-key', params: { id: ctx.endpointId } },
    }),
  },
  {
    method: 'GET',
    path: '/api/mcp/catalog',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ query: near({ limit: intString(1, 200) }), good: {}, bad: { query: 'limit=0' } }),
  },
  {
    method: 'GET',
    path: '/api/mcp/endpoints',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      query: near({
        limit: intString(1, 200),
        cursor: text(40, 1),
        status: fc.constantFrom('healthy', 'pending', 'nope'),
        source: fc.constantFrom('manual', 'discovered'),
        provider: slug,
      }),
      good: { query: 'limit=5' },
      bad: { query: 'status=nope' },
    }),
  },
  {
    method: 'GET',
    path: '/api/mcp/endpoints/:id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constant(ctx.endpointId) },
      query: near({ probes: intString(1, 100) }),
      good: { params: { id: ctx.endpointId } },
      bad: { params: { id: 'nope' } },
    }),
  },
  {
    method: 'GET',
    path: '/api/mcp/tools',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      query: near({
        q: text(40),
        provider: fc.constantFrom('recorder', 'nope'),
        limit: intString(1, 100),
        cursor: text(40, 1),
      }),
      good: { query: 'q=act' },
      bad: { query: 'limit=abc' },
    }),
  },
  { method: 'GET', path: '/api/auth/options', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  {
    method: 'POST',
    path: '/api/auth/email/register-link',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near(
        {
          email: fc.constantFrom('link@example.com', 'not-an-email'),
          name: text(50),
          next: fc.constantFrom('/account', 'https://evil.example/', '//evil', 'javascript:alert(1)'),
        },
        ['email'],
      ),
      good: { body: '{"email":"fuzz-link@example.com","next":"/account"}' },
      bad: { body: '{"email":1}' },
    }),
  },
  {
    method: 'GET',
    path: '/api/auth/email/verify',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      query: near({ token: fc.constantFrom(ctx.linkTokens.get, 'nope') }),
      good: { query: `token=${ctx.linkTokens.get}` },
      bad: { query: 'token=nope' },
    }),
  },
  {
    method: 'POST',
    path: '/api/auth/email/verify',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      body: near({ token: fc.constantFrom(ctx.linkTokens.post, 'nope') }, ['token']),
      good: { body: JSON.stringify({ token: ctx.linkTokens.post }) },
      bad: { body: '{"token":"nope"}' },
    }),
  },
  {
    method: 'POST',
    path: '/api/auth/password/login',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      body: near({ email: fc.constantFrom(ctx.email, 'nobody@example.com'), password: text(40) }, [
        'email',
        'password',
      ]),
      good: { body: JSON.stringify({ email: ctx.email, password: ctx.password }) },
      bad: { body: JSON.stringify({ email: ctx.email, password: 'wrong password' }) },
    }),
  },
  {
    method: 'POST',
    path: '/api/auth/password/reset/request',
    surface: 'website',
    kind: 'json',
    // The good example's address is used by no generator: each address has 5 e-mails a minute.
    fuzz: () => ({
      body: near({ email: fc.constantFrom('reset-fuzz@example.com', 'x') }, ['email']),
      good: { body: '{"email":"reset-example@example.com"}' },
      bad: { body: '{}' },
    }),
  },
  {
    method: 'POST',
    path: '/api/auth/password/reset',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      body: near({ token: fc.constantFrom(ctx.resetToken, 'nope'), password: text(40, 8) }, ['token', 'password']),
      good: { body: JSON.stringify({ token: ctx.resetToken, password: 'a brand new password' }) },
      bad: { body: '{"token":"nope","password":"a brand new password"}' },
    }),
  },
  {
    method: 'GET',
    path: '/api/auth/session',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: { auth: 'session' }, bad: {} }),
  },
  {
    method: 'POST',
    path: '/api/auth/logout',
    surface: 'website',
    kind: 'json',
    session: 'logout',
    fuzz: () => ({ body: anyJson, good: { auth: 'session' }, bad: { auth: 'session-no-csrf' } }),
  },
  {
    method: 'POST',
    path: '/api/account/password',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      body: near({ password: text(40, 8), current_password: text(20) }, ['password']),
      good: { auth: 'session', body: JSON.stringify({ password: ctx.password, current_password: ctx.password }) },
      bad: { auth: 'session', body: '{"password":"short"}' },
    }),
  },
  {
    method: 'GET',
    path: '/api/account/keys',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: { auth: 'session' }, bad: { auth: 'api-key' } }),
  },
  {
    method: 'POST',
    path: '/api/account/keys',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near({ name: text(120) }),
      good: { auth: 'session', body: '{"name":"fuzz"}' },
      bad: { auth: 'session-no-csrf', body: '{"name":"fuzz"}' },
    }),
  },
  {
    method: 'DELETE',
    path: '/api/account/keys/:id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constantFrom(ctx.keyToDelete, 'key_nope') },
      good: { auth: 'session', params: { id: ctx.keyToDelete } },
      bad: { auth: 'session', params: { id: 'key_nope' } },
    }),
  },
  {
    method: 'POST',
    path: '/api/agpk/sources',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near(sourceFields, ['package_id', 'name', 'version', 'vendor_name', 'download_uri', 'sha256']),
      good: { body: JSON.stringify(goodSource) },
      bad: { body: '{"package_id":""}' },
    }),
  },
  {
    method: 'POST',
    path: '/api/agpk/sources/tool',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      body: near(sourceFields, ['package_id', 'name', 'version', 'vendor_name', 'download_uri', 'sha256']),
      good: { auth: 'api-key', body: JSON.stringify(goodSource) },
      bad: { body: JSON.stringify(goodSource) },
    }),
  },
  {
    method: 'GET',
    path: '/api/agpk/sources',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      query: near({
        status: fc.constantFrom('registered', 'healthy', 'nope'),
        trust: fc.constantFrom('risky-unknown', 'known-user'),
        risk: fc.constantFrom('none', 'high'),
        package_id: text(20, 1),
        q: text(40),
        limit: intString(1, 100),
        cursor: text(40, 1),
        mine: fc.constantFrom('1', 'true', 'no'),
      }),
      good: { query: 'limit=5' },
      bad: { query: 'limit=0' },
    }),
  },
  {
    method: 'GET',
    path: '/api/agpk/sources/:id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { id: fc.constant(ctx.sourceId) },
      good: { params: { id: ctx.sourceId } },
      bad: { params: { id: 'src_nope' } },
    }),
  },
  {
    method: 'GET',
    path: '/share/v1/agpk/sources',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ query: near({ q: text(40) }), good: { query: 'q=fuzz' }, bad: { query: 'x=1' } }),
  },
  {
    method: 'GET',
    path: '/api/receipts/checkpoints/latest',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({ good: {}, bad: { query: 'x=1' } }),
  },
  {
    method: 'GET',
    path: '/api/receipts/checkpoints/consistency',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      query: near({ first: intString(1, ctx.treeSize + 1), second: intString(1, ctx.treeSize + 1) }, [
        'first',
        'second',
      ]),
      good: { query: `first=${ctx.treeSize}&second=${ctx.treeSize}` },
      bad: { query: 'first=2&second=1' },
    }),
  },
  {
    method: 'GET',
    path: '/api/receipts/export',
    surface: 'website',
    kind: 'ndjson',
    fuzz: () => ({
      query: near(receiptFilter),
      good: { auth: 'api-key' },
      bad: { auth: 'api-key', query: 'status=maybe' },
    }),
  },
  {
    method: 'GET',
    path: '/api/receipts',
    surface: 'website',
    kind: 'json',
    fuzz: () => ({
      query: near({ ...receiptFilter, limit: intString(1, 500), cursor: intString(1, 1000) }),
      good: { auth: 'api-key', query: 'limit=5' },
      bad: { auth: 'api-key', query: 'limit=0' },
    }),
  },
  {
    method: 'GET',
    path: '/api/receipts/:call_id',
    surface: 'website',
    kind: 'json',
    fuzz: (ctx) => ({
      params: { call_id: fc.constant(ctx.callId) },
      good: { auth: 'api-key', params: { call_id: ctx.callId } },
      bad: { auth: 'api-key', params: { call_id: 'nope' } },
    }),
  },
  { method: 'GET', path: '/openapi.json', surface: 'website', kind: 'json', fuzz: () => ({ good: {} }) },
  {
    method: 'GET',
    path: '/assets/:file',
    registered: 'USE /assets',
    surface: 'website',
    kind: 'file',
    fuzz: () => ({
      params: { file: fc.constantFrom('site.css', 'home.js', 'common.js') },
      good: { params: { file: 'site.css' } },
      bad: { params: { file: 'nope.css' } },
    }),
  },
  PAGE('/'),
  {
    method: 'POST',
    path: '/',
    surface: 'website',
    kind: 'html',
    fuzz: () => ({
      wire: fc.oneof(
        { weight: 4, arbitrary: near(formFields).map(toForm) },
        { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
        { weight: 1, arbitrary: fc.constant(`prompt=${'x'.repeat(20_000)}`) },
      ),
      contentTypes: fc.constantFrom<string | undefined>(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
        undefined,
      ),
      accepts: fc.constantFrom<string | undefined>('text/html', 'text/html', 'application/json', undefined),
      good: {
        body: 'form=intent&prompt=Automate+our+invoices',
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
      bad: {
        body: 'form=lead&email=nope&scenario=developer',
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
    }),
  },
  PAGE('/marketplace', () => ({
    query: near({ q: text(40), provider: fc.constantFrom('recorder', 'NOPE'), cursor: text(40) }),
  })),
  PAGE('/marketplace/endpoints/:id', (ctx) => ({
    params: { id: fc.constant(ctx.endpointId) },
    good: { accept: 'text/html', params: { id: ctx.endpointId } },
    bad: { accept: 'application/json', params: { id: 'nope' } },
  })),
  PAGE('/assistant'),
  PAGE('/receipts'),
  PAGE('/packages'),
  // fuzz.setup is registered by the fuzz suite's set-up; an id nobody registered is a 404 page.
  PAGE('/packages/:id', () => ({
    params: { id: fc.constantFrom('fuzz.setup', 'fuzz.good', 'nope') },
    good: { accept: 'text/html', params: { id: 'fuzz.setup' } },
  })),
  PAGE('/account'),
  PAGE('/sign-in', () => ({ query: near({ token: fc.constantFrom('lnk_nope', '', 'x'.repeat(300)) }) })),
  {
    method: 'POST',
    path: '/sign-in',
    surface: 'website',
    kind: 'html',
    goodStatus: 303,
    fuzz: (ctx) => ({
      wire: fc.oneof(
        { weight: 4, arbitrary: near({ token: fc.constantFrom(ctx.linkTokens.page, 'lnk_nope') }).map(toForm) },
        { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
      ),
      contentTypes: fc.constantFrom<string | undefined>(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
        undefined,
      ),
      accepts: fc.constantFrom<string | undefined>('text/html', 'text/html', 'application/json', undefined),
      good: {
        body: `token=${ctx.linkTokens.page}`,
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
      bad: { body: 'token=lnk_nope', contentType: 'application/x-www-form-urlencoded', accept: 'text/html' },
    }),
  },
  PAGE('/reset-password', () => ({ query: near({ token: fc.constantFrom('rst_nope', '', 'x'.repeat(300)) }) })),
  {
    method: 'POST',
    path: '/reset-password',
    surface: 'website',
    kind: 'html',
    fuzz: (ctx) => ({
      wire: fc.oneof(
        {
          weight: 4,
          arbitrary: near({ token: fc.constantFrom(ctx.pageResetToken, 'rst_nope'), password: text(40, 8) }).map(
            toForm,
          ),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
      ),
      contentTypes: fc.constantFrom<string | undefined>(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
        undefined,
      ),
      accepts: fc.constantFrom<string | undefined>('text/html', 'text/html', 'application/json', undefined),
      good: {
        body: `token=${ctx.pageResetToken}&password=a+brand+new+password`,
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
      bad: {
        body: 'token=rst_nope&password=a+brand+new+password',
        contentType: 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
    }),
  },
];

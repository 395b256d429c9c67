/**
 * Pins the token API routes over HTTP (spec §4.7, §2.15, §2.16, §7): guest tokens, models, agents,
 * the embedded assistant (JSON and SSE, usage recorded, answers from live catalog data, in the
 * question's language), bad input as 4xx with `param` (a NUL named as OpenAI names fields; headers
 * too large for Node in the token shape), and the per-token / per-IP limits —
 * shared by two instances through Redis and the database when TEST_REDIS_URL is set.
 */

const REDIS_URL = process.env['TEST_REDIS_URL'];

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { randomToken, systemClock } from '../../src/kernel/index.ts';
import { type Backend, BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { sendRawHttp } from '../support/raw-http.ts';

async function guestToken(plaza: TestPlaza): Promise<string> {
  const res = await fetch(`${plaza.url}/api/auth/guest-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).data.token;
}

function chat(plaza: TestPlaza, token: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${plaza.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, in order. */
async function sseData(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'plaza-assistant',
  messages: [{ role: 'user', content }],
  ...extra,
});

/**
 * One migrated database per backend for every Plaza of this file: each suite below has a Plaza of
 * its own (its limits, in its memory), and what they keep in the database does not meet (budgets and
 * usage are per guest token, fresh in each test; accounts and catalog rows only the first suite
 * makes). A database made and migrated per suite cost as much as the suite's tests.
 */
const databases = new Map<Backend, Promise<TestDatabase>>();
function sharedDatabase(backend: Backend): Promise<TestDatabase> {
  if (!databases.has(backend)) databases.set(backend, createTestDatabase(backend));
  return databases.get(backend)!;
}
afterAll(async () => {
  for (const database of databases.values()) await (await database).dispose();
});

describe.each(BACKENDS)('token API on %s', (backend) => {
  let plaza: TestPlaza;
  let guest: string;
  let apiKey: string;
  let accountId: string;
  let revokedKey: string;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      db: (await sharedDatabase(backend)).db,
      env: { CHAT_RPM_PER_SUBJECT: '1000', CHAT_RPM_PER_IP: '1000', GUEST_TOKEN_RPM_PER_IP: '1000' },
    });
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    const created = await accounts.createAccount({ email: 'owner@example.com' });
    apiKey = created.apiKey;
    accountId = created.account.id;
    const other = await accounts.createAccount({ email: 'other@example.com' });
    const gone = await accounts.createAccount({ email: 'gone@example.com' });
    revokedKey = gone.apiKey;
    await plaza.db.prisma.apiKey.updateMany({ where: { accountId: gone.account.id }, data: { revokedAt: new Date() } });
    const prisma = plaza.db.prisma;
    await prisma.agent.create({
      data: { id: 'agt_mine', accountId, aginId: 'agin_mine', agentPrincipal: 'acct:mine', displayName: 'Mine' },
    });
    await prisma.agent.create({
      data: {
        id: 'agt_theirs',
        accountId: other.account.id,
        aginId: 'agin_theirs',
        agentPrincipal: 'acct:theirs',
        displayName: 'Theirs',
      },
    });
    // Live catalog data the embedded assistant must find (before its 30 s content cache fills).
    await prisma.mcpEndpoint.create({
      data: {
        id: 'ep_weather',
        provider: 'skycast',
        url: 'https://skycast.example/mcp',
        registeredBy: 'ops@skycast.example',
        status: 'healthy',
        tools: { create: { id: 'tl_1', name: 'forecast_hourly', description: 'Hourly weather forecast for a city.' } },
      },
    });
    await prisma.mcpEndpoint.create({
      data: {
        id: 'ep_dead',
        provider: 'ghostly',
        url: 'https://ghostly.example/mcp',
        registeredBy: 'x@ghostly.example',
        status: 'registered',
        tools: { create: { id: 'tl_2', name: 'haunt_weather', description: 'Unprobed weather tool.' } },
      },
    });
    await prisma.packageSource.create({
      data: {
        id: 'ps_1',
        packageId: 'com.example.pdfkit',
        name: 'pdfkit',
        version: '2.1.0',
        summary: 'Converts documents to PDF.',
        vendorName: 'Example Corp',
        downloadUri: 'https://example.com/pdfkit.agpk',
        sha256: 'a'.repeat(64),
        trust: 'known-user',
        status: 'healthy',
        live: true,
      },
    });
    guest = await guestToken(plaza);
  });
  afterAll(async () => {
    await plaza?.close();
  });

  describe('POST /api/auth/guest-token', () => {
    it('issues a 24-hour EdDSA at+jwt for a visitor, with no body or an empty one', async () => {
      for (const init of [
        { method: 'POST' },
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      ]) {
        const res = await fetch(`${plaza.url}/api/auth/guest-token`, init);
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control')).toBe('no-store');
        const body: any = await res.json();
        expect(body).toMatchObject({
          success: true,
          code: 'SUCCESS',
          data: { expiresIn: 86_400, tokenType: 'Bearer', guestId: expect.stringMatching(/^gst_/) },
        });
        const [header, payload] = body.data.token
          .split('.')
          .slice(0, 2)
          .map((part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()));
        expect(header).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt', kid: expect.any(String) });
        expect(payload).toMatchObject({
          iss: plaza.config.publicBaseUrl,
          aud: 'plaza-api',
          sub: body.data.guestId,
          scope: 'chat agents:read',
        });
        expect(payload.exp - payload.iat).toBe(86_400);
        expect(payload.jti).toEqual(expect.any(String));
      }
    });

    it('rejects a body with fields (400, param) and a non-JSON body (400: the token table has no 415)', async () => {
      const res = await fetch(`${plaza.url}/api/auth/guest-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"admin":true}',
      });
      expect(res.status).toBe(400);
      expect((await res.json()) as any).toMatchObject({
        code: 'BAD_REQUEST',
        error: { param: 'admin', type: 'invalid_request_error' },
      });
      const text = await fetch(`${plaza.url}/api/auth/guest-token`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(text.status).toBe(400);
      expect((await text.json()) as any).toMatchObject({
        code: 'BAD_REQUEST',
        error: { type: 'invalid_request_error', param: null },
      });
    });
  });

  describe('authentication', () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const jwtWithHeader = (header: unknown) =>
      `${b64(header)}.${b64({ sub: 'gst_x', exp: 9_999_999_999 })}.${Buffer.from('sig').toString('base64url')}`;

    it('answers token API paths in its own shape however they are cased or slashed', async () => {
      for (const path of ['/API/V1/MODELS', '/api/v1/models/', '/api/Agents', '/api/agents/']) {
        const res = await fetch(`${plaza.url}${path}`);
        expect(res.status, path).toBe(401);
        expect((await res.json()) as any, path).toMatchObject({
          code: 'UNAUTHORIZED',
          error: { code: 'UNAUTHORIZED', type: 'authentication_error' },
        });
      }
    });

    it.each([
      ['no header', undefined],
      ['a Basic credential', 'Basic dXNlcjpwYXNz'],
      ['a malformed bearer', 'Bearer not.a.jwt'],
      ['an unknown API key', `Bearer plz_0000000000000_${'0'.repeat(40)}`],
      ['a revoked API key', 'revoked'],
      // Header fields of the wrong type or with a NUL once answered 500.
      ['a JWT whose typ is a number', `Bearer ${jwtWithHeader({ alg: 'EdDSA', typ: 123, kid: 'x' })}`],
      ['a JWT whose typ is a list', `Bearer ${jwtWithHeader({ alg: 'EdDSA', typ: ['at+jwt'], kid: 'x' })}`],
      ['a JWT whose kid holds a NUL', `Bearer ${jwtWithHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: 'a\u0000b' })}`],
    ])('answers %s with 401 in the token shape', async (_name, given) => {
      const authorization = given === 'revoked' ? `Bearer ${revokedKey}` : given;
      const res = await fetch(`${plaza.url}/api/v1/models`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await res.json()) as any).toMatchObject({
        success: false,
        code: 'UNAUTHORIZED',
        error: { code: 'UNAUTHORIZED', type: 'authentication_error' },
      });
    });

    it('answers headers too large for Node (a huge bearer) in the token shape: 400, a BadRequestError in the openai client', async () => {
      const raw = (bytes: string) => sendRawHttp(plaza.url, bytes);
      const bearer = `Bearer ${'a'.repeat(40_000)}`;
      for (const path of ['/api/v1/chat/completions', '/API/V1/models?x=1', '/api/auth/guest-token']) {
        const answer = await raw(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        );
        expect(answer.split('\r\n')[0], path).toBe('HTTP/1.1 400 Bad Request');
        const requestId = /\r\nX-Request-Id: (\S+)\r\n/.exec(answer)?.[1];
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), path).toEqual({
          success: false,
          code: 'BAD_REQUEST',
          message: 'The request headers are too large.',
          request_id: requestId,
          error: {
            message: 'The request headers are too large.',
            type: 'invalid_request_error',
            code: 'BAD_REQUEST',
            param: null,
          },
        });
      }
      // The website keeps HTTP's 431 and its own shape.
      expect(
        (await raw(`GET /api/health HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer}\r\n\r\n`)).split('\r\n')[0],
      ).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      const client = new OpenAI({ apiKey: 'a'.repeat(40_000), baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
      const error = await client.chat.completions
        .create({ model: 'plaza-assistant', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/headers are too large/);
    });
  });

  describe('GET /api/v1/models', () => {
    it('lists the embedded assistant in the OpenAI list shape', async () => {
      const res = await fetch(`${plaza.url}/api/v1/models`, { headers: { authorization: `Bearer ${guest}` } });
      expect(res.status).toBe(200);
      expect((await res.json()) as any).toMatchObject({
        object: 'list',
        data: [{ id: 'plaza-assistant', object: 'model', owned_by: 'plaza' }],
      });
    });
  });

  // The AI SDK's `createOpenAI(...)(model)` and LangChain's `useResponsesApi` call OpenAI's
  // Responses API (POST /responses with `input`), which Plaza does not offer: the 404 said only
  // "No route for POST /api/v1/responses".
  describe('/api/v1/responses', () => {
    it('answers 404 in the token shape, naming the Chat Completions route and how the SDKs reach it', async () => {
      const client = new OpenAI({ apiKey: guest, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
      const error = await client.responses
        .create({ model: 'plaza-assistant', input: 'Which plans are there?' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      const message = (error as InstanceType<typeof OpenAI.NotFoundError>).message;
      expect(message).toMatch(/Responses API/);
      expect(message).toMatch(/POST \/api\/v1\/chat\/completions/);
      expect(message).toMatch(/\.chat\(/);
      const res = await fetch(`${plaza.url}/api/v1/responses/resp_1`, {
        headers: { authorization: `Bearer ${guest}` },
      });
      expect(res.status).toBe(404);
      expect((await res.json()) as any).toMatchObject({
        success: false,
        code: 'NOT_FOUND',
        message: expect.stringMatching(/chat\/completions/),
        error: { type: 'not_found_error', code: 'NOT_FOUND', param: null },
      });
    });
  });

  describe('GET /api/agents', () => {
    it('shows a guest the public site assistant only', async () => {
      const res = await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${guest}` } });
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body).toMatchObject({ success: true, code: 'SUCCESS' });
      expect(body.data.agents.map((a: { id: string }) => a.id)).toEqual(['agt_site_assistant']);
      expect(body.data.agents[0]).toMatchObject({
        agin_id: 'agin_site_assistant',
        display_name: 'Plaza site assistant',
        public: true,
      });
    });

    it("shows an account key its own agents too, never another account's", async () => {
      const res = await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${apiKey}` } });
      const ids = ((await res.json()) as any).data.agents.map((a: { id: string }) => a.id);
      expect(ids).toEqual(expect.arrayContaining(['agt_site_assistant', 'agt_mine']));
      expect(ids).not.toContain('agt_theirs');
    });
  });

  describe('POST /api/v1/chat/completions (embedded assistant)', () => {
    it("answers from Plaza's content, says what it is, and records usage", async () => {
      const res = await chat(plaza, guest, ask('How do I register a package source?'), {
        'x-request-id': 'req-chat-1',
      });
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body).toMatchObject({
        object: 'chat.completion',
        model: 'plaza-assistant',
        choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
      });
      expect(body.id).toMatch(/^chatcmpl-/);
      expect(Number.isInteger(body.created)).toBe(true);
      const content: string = body.choices[0].message.content;
      expect(content).toMatch(/embedded assistant/);
      expect(content).toMatch(/POST \/api\/agpk\/sources/);
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
      await expect.poll(() => plaza.db.prisma.chatUsage.count({ where: { requestId: 'req-chat-1' } })).toBe(1);
      const rows = await plaza.db.prisma.chatUsage.findMany({ where: { requestId: 'req-chat-1' } });
      expect(rows[0]).toMatchObject({
        subjectType: 'guest',
        model: 'plaza-assistant',
        promptTokens: body.usage.prompt_tokens,
        completionTokens: body.usage.completion_tokens,
      });
    });

    it('finds online MCP tools and healthy packages, not unprobed endpoints', async () => {
      const weather = ((await (await chat(plaza, guest, ask('Is there a weather forecast tool?'))).json()) as any)
        .choices[0].message.content;
      expect(weather).toMatch(/forecast_hourly/);
      expect(weather).not.toMatch(/haunt_weather/);
      const pdf = ((await (await chat(plaza, guest, ask('I need to convert documents to PDF'))).json()) as any)
        .choices[0].message.content;
      expect(pdf).toMatch(/pdfkit/);
    });

    it('answers a Chinese question in Chinese', async () => {
      const body: any = await (await chat(plaza, guest, ask('怎么登记软件包来源？'))).json();
      expect(body.choices[0].message.content).toMatch(/内置助手/);
      expect(body.choices[0].message.content).toMatch(/软件包/);
    });

    it('streams chunks: role first, finish_reason last, usage when asked, then [DONE]', async () => {
      const res = await chat(
        plaza,
        guest,
        ask('What is AGIN?', { stream: true, stream_options: { include_usage: true } }),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const data = await sseData(res);
      expect(data.at(-1)).toBe('[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      const usageChunk = chunks.at(-1);
      expect(usageChunk.choices).toEqual([]);
      const last = chunks.at(-2);
      expect(last.choices[0].finish_reason).toBe('stop');
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
      expect(text).toMatch(/AGIN/);
      expect(usageChunk.usage.completion_tokens).toBeGreaterThan(0);
    });

    it('stops at max_tokens with finish_reason length, and omits usage unless asked', async () => {
      const data = await sseData(await chat(plaza, guest, ask('What is AGIN?', { stream: true, max_tokens: 5 })));
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(chunks.filter((c) => c.choices[0].delta.content).length).toBe(5);
      const json: any = await (await chat(plaza, guest, ask('What is AGIN?', { max_tokens: 5 }))).json();
      expect(json.choices[0].finish_reason).toBe('length');
      expect(json.usage.completion_tokens).toBe(5);
    });

    it("charges an account key's usage to the account", async () => {
      const res = await chat(plaza, apiKey, ask('plans'), { 'x-request-id': 'req-acct-1' });
      expect(res.status).toBe(200);
      await expect
        .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-acct-1' } }))
        .toMatchObject({ subject: accountId, subjectType: 'account' });
    });

    it.each<[string, unknown, string]>([
      ['missing messages', { model: 'plaza-assistant' }, 'messages'],
      ['a wrong role', { model: 'plaza-assistant', messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      ['a non-number temperature', ask('x', { temperature: 'warm' }), 'temperature'],
      ['a huge max_tokens', ask('x', { max_tokens: 1e9 }), 'max_tokens'],
      ['an unknown model', { ...ask('x'), model: 'gpt-9' }, 'model'],
      ['an unknown field', ask('x', { top_k: 40 }), 'top_k'],
      [
        'a required tool call',
        ask('x', { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' }),
        'tool_choice',
      ],
      [
        'a named tool call',
        ask('x', {
          tools: [{ type: 'function', function: { name: 'f' } }],
          tool_choice: { type: 'function', function: { name: 'f' } },
        }),
        'tool_choice',
      ],
      [
        'a tool with a bad name',
        ask('x', { tools: [{ type: 'function', function: { name: 'a.b' } }] }),
        'tools[0].function.name',
      ],
      ['JSON output', ask('x', { response_format: { type: 'json_object' } }), 'response_format.type'],
      ['log probabilities', ask('x', { logprobs: true }), 'logprobs'],
      // The NUL check runs before the schema, at the HTTP edge, and names the field the same way.
      [
        'a NUL in a message',
        {
          model: 'plaza-assistant',
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'user', content: 'a\u0000b' },
          ],
        },
        'messages[1].content',
      ],
      [
        'a NUL in a text part',
        { model: 'plaza-assistant', messages: [{ role: 'user', content: [{ type: 'text', text: 'a\u0000' }] }] },
        'messages[0].content[0].text',
      ],
    ])('answers %s with 400 and param', async (_name, body, param) => {
      const res = await chat(plaza, guest, body);
      expect(res.status).toBe(400);
      expect((await res.json()) as any).toMatchObject({
        success: false,
        code: 'BAD_REQUEST',
        error: { type: 'invalid_request_error', param },
      });
    });

    it('answers malformed JSON and a 2 MB body with 400 (the token table has no 413), never 5xx', async () => {
      expect((await chat(plaza, guest, '{"model":')).status).toBe(400);
      const huge = JSON.stringify(ask('x'.repeat(2 * 1024 * 1024)));
      const res = await chat(plaza, guest, huge);
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({
        success: false,
        code: 'BAD_REQUEST',
        error: { type: 'invalid_request_error', code: 'BAD_REQUEST', param: null },
      });
      expect(body.message).toMatch(/exceeds the limit of \d+ bytes/);
    });
  });
});

describe.each(BACKENDS)('token API limits on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      db: (await sharedDatabase(backend)).db,
      env: {
        GUEST_TOKEN_RPM_PER_IP: '3',
        CHAT_RPM_PER_SUBJECT: '2',
        CHAT_RPM_PER_IP: '1000',
        CHAT_TOKENS_PER_DAY_PER_SUBJECT: '60',
      },
    });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('limits requests per token per minute with 429 RATE_LIMITED and Retry-After', async () => {
    const token = await guestToken(plaza);
    expect((await chat(plaza, token, ask('hi', { max_tokens: 1 }))).status).toBe(200);
    expect((await chat(plaza, token, ask('hi', { max_tokens: 1 }))).status).toBe(200);
    const limited = await chat(plaza, token, ask('hi', { max_tokens: 1 }));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await limited.json()) as any).toMatchObject({
      code: 'RATE_LIMITED',
      error: { type: 'rate_limit_error', code: 'RATE_LIMITED' },
    });
  });

  it('limits guest-token minting per client address', async () => {
    // One token was minted above; two more are allowed this minute.
    expect((await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).status).toBe(200);
    expect((await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).status).toBe(200);
    const res = await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await res.json()) as any).toMatchObject({ code: 'RATE_LIMITED' });
  });
});

describe.each(BACKENDS)('the daily token budget on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      db: (await sharedDatabase(backend)).db,
      env: {
        CHAT_TOKENS_PER_DAY_PER_SUBJECT: '60',
        CHAT_RPM_PER_SUBJECT: '1000',
        CHAT_RPM_PER_IP: '1000',
        GUEST_TOKEN_RPM_PER_IP: '1000',
      },
    });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('refuses with 400 a request that alone may use more than a whole day of the budget', async () => {
    const token = await guestToken(plaza);
    // No max_tokens: it counts as CHAT_MAX_TOKENS, far past this budget of 60.
    const res = await chat(plaza, token, ask('Tell me everything about AGPK packages'));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ code: 'BAD_REQUEST', error: { param: 'max_tokens' } });
    expect(body.message).toMatch(/more than a whole day's token budget of 60; lower max_tokens/);
  });

  it('stops a token once its daily token budget is spent', async () => {
    const token = await guestToken(plaza);
    const statuses: number[] = [];
    for (let i = 0; i < 6 && !statuses.includes(429); i++)
      statuses.push(
        (await chat(plaza, token, ask('Tell me everything about AGPK packages', { max_tokens: 40 }))).status,
      );
    expect(statuses[0]).toBe(200);
    expect(statuses.at(-1)).toBe(429);
    const res = await chat(plaza, token, ask('hi', { max_tokens: 1 }));
    expect(res.status).toBe(429);
    expect(((await res.json()) as any).message).toMatch(/token budget/);
  });
});

describe.each(BACKENDS)('a daily token budget below CHAT_MAX_TOKENS on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    // CHAT_MAX_TOKENS is 4096 by default; the embedded assistant answers in at most 512 tokens.
    plaza = await startTestPlaza(backend, {
      db: (await sharedDatabase(backend)).db,
      env: {
        CHAT_TOKENS_PER_DAY_PER_SUBJECT: '1000',
        CHAT_RPM_PER_SUBJECT: '1000',
        CHAT_RPM_PER_IP: '1000',
        GUEST_TOKEN_RPM_PER_IP: '1000',
      },
    });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('admits a request without max_tokens to the embedded assistant, reserving what that model can answer', async () => {
    const token = await guestToken(plaza);
    const res = await chat(plaza, token, ask('Tell me everything about AGPK packages'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(512);
    // Asking for more than a day's budget outright is still refused.
    const big = await chat(plaza, token, ask('hi', { max_tokens: 2000 }));
    expect(big.status).toBe(400);
  });
});

describe.skipIf(!REDIS_URL).each(BACKENDS)('two instances sharing the database and Redis on %s', (backend) => {
  let database: TestDatabase;
  let a: TestPlaza;
  let b: TestPlaza;
  beforeAll(async () => {
    database = await sharedDatabase(backend);
    const env = {
      REDIS_URL: REDIS_URL!,
      PLAZA_RATE_LIMIT_KEY_PREFIX: `test:${randomToken(6)}:`,
      CHAT_RPM_PER_SUBJECT: '3',
      GUEST_TOKEN_RPM_PER_IP: '1000',
    };
    a = await startTestPlaza(backend, { db: database.db, env });
    b = await startTestPlaza(backend, { db: database.db, env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('accepts a token minted by one instance at the other, and counts its requests once across both', async () => {
    const token = await guestToken(a);
    const statuses = [];
    for (const instance of [a, b, a, b])
      statuses.push((await chat(instance, token, ask('hi', { max_tokens: 1 }))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe.each(BACKENDS)('the daily token budget under concurrent requests on %s', (backend) => {
  let database: TestDatabase;
  let instances: TestPlaza[] = [];
  const BUDGET = 300;
  beforeAll(async () => {
    database = await sharedDatabase(backend);
    // Two instances share the budget through Redis; without it each counts for itself, so one.
    const env = {
      CHAT_TOKENS_PER_DAY_PER_SUBJECT: String(BUDGET),
      CHAT_RPM_PER_SUBJECT: '1000',
      CHAT_RPM_PER_IP: '1000',
      GUEST_TOKEN_RPM_PER_IP: '1000',
    };
    const shared = REDIS_URL ? { ...env, REDIS_URL, PLAZA_RATE_LIMIT_KEY_PREFIX: `test:${randomToken(6)}:` } : env;
    instances = await Promise.all(
      (REDIS_URL ? [1, 2] : [1]).map(() => startTestPlaza(backend, { db: database.db, env: shared })),
    );
  });
  afterAll(async () => {
    await Promise.all(instances.map((p) => p.close()));
  });

  it('reserves what a request may use when it is admitted, so requests in flight at once cannot overspend it', async () => {
    const res = await fetch(`${instances[0]!.url}/api/auth/guest-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { token, guestId } = ((await res.json()) as any).data;
    const MAX = 60;
    const statuses = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, i) =>
          (
            await chat(
              instances[i % instances.length]!,
              token,
              ask('Tell me everything about AGPK packages', { max_tokens: MAX }),
            )
          ).status,
      ),
    );
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    // Usage rows are written in batches; wait for one per answered request.
    const answered = statuses.filter((s) => s === 200).length;
    await expect
      .poll(() => database.db.prisma.chatUsage.count({ where: { subject: guestId } }), { timeout: 5_000 })
      .toBe(answered);
    const spent =
      (await database.db.prisma.chatUsage.aggregate({ where: { subject: guestId }, _sum: { totalTokens: true } }))._sum
        .totalTokens ?? 0;
    // At most the budget and the last admitted request's share (its prompt and MAX) beyond it.
    expect(spent).toBeLessThanOrEqual(BUDGET + MAX + 20);
    // Once the answers are in, what they did not use is given back: a small request still fits.
    const after = await chat(instances[0]!, token, ask('hi', { max_tokens: 1 }));
    expect(after.status).toBe(spent < BUDGET ? 200 : 429);
  });
});

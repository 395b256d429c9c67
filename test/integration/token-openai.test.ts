/**
 * The official `openai` npm client against Plaza's token API (a real peer): plain and streamed
 * completions with a guest token, the errors it must raise as the right classes (expired, forged,
 * `alg: none`, foreign audience -> AuthenticationError; over the limit -> RateLimitError; bad
 * input -> BadRequestError). The mid-stream error event is in token-upstream.test.ts.
 */
import { base64url, generateKeyPair, SignJWT } from 'jose';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/kernel/index.ts';
import { createSigningKeyStore } from '../../src/keys/index.ts';
import { createGuestTokens } from '../../src/tokens/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe.each(BACKENDS)('openai client against Plaza on %s', (backend) => {
  let plaza: TestPlaza;
  let token: string;
  const client = (apiKey: string) =>
    new OpenAI({ apiKey, baseURL: `${plaza.url}/api/v1`, maxRetries: 0, timeout: 10_000 });

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { CHAT_RPM_PER_SUBJECT: '4', GUEST_TOKEN_RPM_PER_IP: '1000' } });
    token = await mint();
  });
  afterAll(async () => {
    await plaza?.close();
  });

  async function mint(): Promise<string> {
    return ((await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as any).data.token;
  }

  /** A token signed with Plaza's real key but the given claim overrides. */
  async function signWithRealKey(claims: Record<string, unknown>): Promise<string> {
    const keys = createSigningKeyStore({ prisma: plaza.db.prisma, clock: systemClock });
    const key = await keys.activeKey('token');
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      scope: 'chat agents:read',
      iss: plaza.config.publicBaseUrl,
      aud: 'plaza-api',
      sub: 'gst_x',
      jti: 'j',
      iat: now,
      exp: now + 600,
      ...claims,
    })
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'at+jwt' })
      .sign(key.privateKey);
  }

  it('gets a non-streaming completion with a guest token', async () => {
    const completion = await client(token).chat.completions.create({
      model: 'plaza-assistant',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Which plans are there?' },
      ],
      temperature: 0.2,
      max_tokens: 200,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.role).toBe('assistant');
    expect(completion.choices[0]?.message.content).toMatch(/embedded assistant/);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams a completion with usage', async () => {
    const stream = await client(token).chat.completions.create({
      model: 'plaza-assistant',
      messages: [{ role: 'user', content: 'How do MCP listings work?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/MCP/);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('lists models', async () => {
    const models = [];
    for await (const model of client(token).models.list()) models.push(model.id);
    expect(models).toContain('plaza-assistant');
  });

  it('retrieves a model, and raises BadRequestError with param model for an unknown one', async () => {
    expect(await client(token).models.retrieve('plaza-assistant')).toMatchObject({
      id: 'plaza-assistant',
      object: 'model',
      owned_by: 'plaza',
    });
    const error = await client(token)
      .models.retrieve('gpt-nope')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
  });

  const expired = async () => {
    const past = { now: () => Date.now() - 2 * 86_400_000 };
    const keys = createSigningKeyStore({ prisma: plaza.db.prisma, clock: past });
    return (
      await createGuestTokens({ keys, clock: past, issuer: plaza.config.publicBaseUrl, audience: 'plaza-api' }).issue()
    ).token;
  };
  const forged = async () => {
    const [header, payload] = token.split('.');
    const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const signature = new Uint8Array(
      await crypto.subtle.sign('Ed25519', other.privateKey, new TextEncoder().encode(`${header}.${payload}`)),
    );
    return `${header}.${payload}.${base64url.encode(signature)}`;
  };
  const algNone = async () => {
    const [header, payload] = token.split('.');
    const none = base64url.encode(
      JSON.stringify({ ...JSON.parse(new TextDecoder().decode(base64url.decode(header!))), alg: 'none' }),
    );
    return `${none}.${payload}.`;
  };

  it.each<[string, () => Promise<string>]>([
    ['an expired token', expired],
    ['a forged signature', forged],
    ['alg none', algNone],
    ['a token for another audience', () => signWithRealKey({ aud: 'another-api' })],
  ])('raises AuthenticationError for %s', async (_name, make) => {
    const bad = await make();
    const error = await client(bad)
      .chat.completions.create({ model: 'plaza-assistant', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
  });

  it('accepts a hand-signed token with the right audience (so the refusals are about the claim)', async () => {
    const ok = await client(await signWithRealKey({})).chat.completions.create({
      model: 'plaza-assistant',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1,
    });
    expect(ok.choices).toHaveLength(1);
  });

  it('grants a guest token no more than the guest scopes, whatever it claims', async () => {
    const greedy = await signWithRealKey({ scope: 'chat agents:read agents:write' });
    const res = await fetch(`${plaza.url}/api/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${greedy}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'x' }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).code).toBe('FORBIDDEN');
  });

  it('raises BadRequestError with param for bad input', async () => {
    const error = await client(token)
      .chat.completions.create({
        model: 'plaza-assistant',
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 7,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
  });

  // OpenAI's own pattern: push the answer's message back. The client's helpers return it with
  // `refusal` (stream().finalMessage()) and `parsed` (parse()), which were refused as unknown.
  it('continues a conversation with the messages the client helpers return (stream().finalMessage(), parse())', async () => {
    const fresh = client(await mint());
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Which plans are there?' }];
    const streamed = await fresh.chat.completions
      .stream({ model: 'plaza-assistant', messages, max_tokens: 20 })
      .finalMessage();
    expect(streamed).toHaveProperty('refusal', null);
    messages.push(streamed, { role: 'user', content: 'And the price?' });
    expect(
      (await fresh.chat.completions.create({ model: 'plaza-assistant', messages, max_tokens: 20 })).choices[0]?.message
        .content,
    ).toMatch(/embedded assistant/);
    const parsed = await fresh.chat.completions.parse({
      model: 'plaza-assistant',
      messages: [{ role: 'user', content: 'Which plans are there?' }],
    });
    expect(parsed.choices[0]?.message).toHaveProperty('parsed', null);
    const again = await fresh.chat.completions.create({
      model: 'plaza-assistant',
      messages: [
        { role: 'user', content: 'Which plans are there?' },
        parsed.choices[0]!.message,
        { role: 'user', content: 'And the price?' },
      ],
      max_tokens: 20,
    });
    expect(again.choices[0]?.finish_reason).toBeTruthy();
  });

  // An agent framework declares its tools on every request (the AI SDK's generateText({ tools }),
  // LangChain's bindTools): with tool_choice "auto" a model may answer in text, as this one does.
  it('answers in text a request that declares tools, and refuses one that requires a tool call', async () => {
    const fresh = client(await mint());
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const answer = await fresh.chat.completions.create({
      model: 'plaza-assistant',
      messages: [{ role: 'user', content: 'Which plans are there?' }],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_tokens: 30,
    });
    expect(answer.choices[0]?.message.content).toMatch(/embedded assistant/);
    expect(answer.choices[0]?.message.tool_calls ?? []).toEqual([]);
    expect(answer.choices[0]?.finish_reason).not.toBe('tool_calls');
    const streamed = await fresh.chat.completions
      .stream({
        model: 'plaza-assistant',
        messages: [{ role: 'user', content: 'Which plans are there?' }],
        tools,
        max_tokens: 30,
      })
      .finalMessage();
    expect(streamed.content).toMatch(/embedded assistant/);
    const required = await fresh.chat.completions
      .create({ model: 'plaza-assistant', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'required' })
      .catch((e: unknown) => e);
    expect(required).toBeInstanceOf(OpenAI.BadRequestError);
    expect((required as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tool_choice');
    expect((required as Error).message).toMatch(/calls no tools.*upstream model/);
  });

  it('raises RateLimitError once a token exceeds its requests per minute', async () => {
    const fresh = client(await mint());
    const call = () =>
      fresh.chat.completions.create({
        model: 'plaza-assistant',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 1,
      });
    for (let i = 0; i < 4; i++) await call();
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBeTruthy();
  });
});

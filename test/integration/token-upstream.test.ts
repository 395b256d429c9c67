/**
 * The proxy path of POST /api/v1/chat/completions against a local OpenAI-compatible upstream
 * (a node:http test server standing in for OpenAI/vLLM/Ollama): aliases and credentials, chunk
 * pass-through in order and unbuffered (the upstream holds back the rest of its answer until the
 * client has seen the first chunk), upstream usage as the truth and in OpenAI's place in a stream
 * whichever chunks the upstream put it in, upstream 500/429 (Retry-After in seconds or as a
 * date)/timeouts mapped to §7 codes with bounded retries, a disconnect mid-stream surfacing as an SSE error event (an
 * APIError in the openai client), and a client disconnect cancelling the upstream request; a
 * request is sent 1 + LLM_MAX_RETRIES times at most, and a pooled connection the upstream closed
 * is resent even with no retry left; a long answer of one word is counted (no stack overflow), and
 * nothing the relay's sink throws escapes into undici.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createUpstreamBackend, parseChatRequest } from '../../src/chat/index.ts';
import { drainedOrClosed } from '../../src/http/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

type Handler = (req: IncomingMessage, body: Record<string, any>, res: ServerResponse) => void | Promise<void>;

interface Upstream {
  url: string;
  requests: { headers: IncomingMessage['headers']; body: Record<string, any> }[];
  handler: Handler;
  /** Resolves when the upstream sees its current request's connection close. */
  closed: Promise<void>;
  server: Server;
}

async function startUpstream(): Promise<Upstream> {
  let markClosed: () => void = () => undefined;
  const upstream: Upstream = {
    url: '',
    requests: [],
    handler: (_req, _body, res) => void res.end(),
    closed: Promise.resolve(),
    server: createServer(async (req, res) => {
      const raw: Buffer[] = [];
      for await (const part of req) raw.push(part as Buffer);
      const body = JSON.parse(Buffer.concat(raw).toString() || '{}');
      upstream.requests.push({ headers: req.headers, body });
      upstream.closed = new Promise((resolve) => (markClosed = resolve));
      res.on('close', () => markClosed());
      await upstream.handler(req, body, res);
    }),
  };
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
  return upstream;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
const usageChunk = (usage: Record<string, number>) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [], usage })}\n\n`;
const UPSTREAM_USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

function sseHead(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
}

describe.each(BACKENDS)('chat completions through an upstream on %s', (backend) => {
  let upstream: Upstream;
  let plaza: TestPlaza;
  let token: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    plaza = await startTestPlaza(backend, {
      env: {
        LLM_BASE_URL: `${upstream.url}/v1`,
        LLM_API_KEY: 'sk-upstream-secret',
        LLM_MODELS: 'up-model',
        LLM_MODEL_ALIASES: 'fast=up-model',
        LLM_TIMEOUT_MS: '700',
        LLM_COMPLETION_TIMEOUT_MS: '2000',
        LLM_MAX_RETRIES: '1',
        CHAT_RPM_PER_SUBJECT: '1000',
        CHAT_RPM_PER_IP: '1000',
        // Every test comes from one address: the long answers charged below would use up its day.
        CHAT_TOKENS_PER_DAY_PER_IP: '1000000000',
      },
    });
    token = ((await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as any).data.token;
  });
  afterAll(async () => {
    await plaza?.close();
    upstream?.server.closeAllConnections();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });
  beforeEach(() => {
    upstream.requests = [];
  });

  const post = (body: Record<string, unknown>, requestId?: string, signal?: AbortSignal) =>
    fetch(`${plaza.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(requestId ? { 'x-request-id': requestId } : {}),
      },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello there' }], ...body }),
      ...(signal ? { signal } : {}),
    });

  it('refuses a request whose choices together may use more than a day of the budget, before anything goes upstream', async () => {
    // 128 choices of CHAT_MAX_TOKENS (4096) each: 524,288 tokens, past the bearer's 200,000 a day.
    const res = await post({ model: 'up-model', n: 128, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ code: 'BAD_REQUEST', error: { type: 'invalid_request_error', param: 'n' } });
    expect(body.message).toMatch(
      /may use up to about 524\d{3} tokens .*: max_tokens is unset, so 4096\).*; lower n or max_tokens\.$/,
    );
    // The advice names the limit the request set: max_completion_tokens wins over max_tokens.
    const set = await post({
      model: 'up-model',
      n: 64,
      max_tokens: 10,
      max_completion_tokens: 4096,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(set.status).toBe(400);
    expect(((await set.json()) as any).message).toMatch(/; lower n or max_completion_tokens\.$/);
    expect(upstream.requests).toHaveLength(0);
    // The same choices with a bounded max_tokens fit.
    upstream.handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-up',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
        }),
      );
    };
    expect(
      (await post({ model: 'up-model', n: 128, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })).status,
    ).toBe(200);
  });
  it("forwards a completion under the alias target with Plaza's upstream key and records the upstream usage", async () => {
    upstream.handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-up',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
          usage: UPSTREAM_USAGE,
          request_id: 'upstream-own-id',
        }),
      );
    };
    const res = await post({ model: 'fast', temperature: 0.5 }, 'req-up-json');
    expect(res.status).toBe(200);
    expect((await res.json()) as any).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'Hi!' } }],
      usage: UPSTREAM_USAGE,
      request_id: 'req-up-json',
    });
    expect(upstream.requests).toHaveLength(1);
    const sent = upstream.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(sent.body).toMatchObject({
      model: 'up-model',
      temperature: 0.5,
      stream: false,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-json' } }))
      .toMatchObject({ model: 'fast', promptTokens: 11, completionTokens: 7, totalTokens: 18 });
  });

  it('forwards tools, tool results, images, response_format, logprobs, n and the other OpenAI fields intact (openai client)', async () => {
    const toolCall = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    };
    const request: OpenAI.ChatCompletionCreateParamsNonStreaming = {
      model: 'up-model',
      messages: [
        { role: 'developer', content: 'Use the tools.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } },
      logprobs: true,
      top_logprobs: 2,
      n: 2,
      seed: 7,
      user: 'end-user-1',
      logit_bias: { '50256': -100 },
      max_completion_tokens: 50,
    };
    const answer = {
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1,
      model: 'up-model',
      choices: [0, 1].map((index) => ({
        index,
        message: { role: 'assistant', content: null, tool_calls: [{ ...toolCall, id: `call_${index + 2}` }] },
        logprobs: { content: [] },
        finish_reason: 'tool_calls',
      })),
      usage: UPSTREAM_USAGE,
    };
    upstream.handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    };
    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create(request);
    const { model: _model, ...rest } = request;
    expect(upstream.requests[0]!.body).toEqual({ ...rest, model: 'up-model', stream: false });
    expect(completion.choices.map((c) => [c.finish_reason, c.message.tool_calls])).toEqual(
      answer.choices.map((c) => [c.finish_reason, c.message.tool_calls]),
    );
  });

  it('relays a llama.cpp-style tool-call stream: CRLF, "data:" without a space, comments, usage on the finishing chunk', async () => {
    const base = { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model' };
    const events = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null },
        ],
      },
      {
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, finish_reason: null },
        ],
      },
      {
        ...base,
        choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
        usage: UPSTREAM_USAGE,
        timings: { predicted_n: 7 },
      },
    ];
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(': keep-alive\r\n\r\n');
      for (const event of events) res.write(`data:${JSON.stringify(event)}\r\n\r\n`);
      res.end('data: [DONE]\r\n\r\n');
    };
    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    let args = '';
    let name: string | undefined;
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const part of stream) {
      const call = part.choices[0]?.delta.tool_calls?.[0];
      name ??= call?.function?.name;
      args += call?.function?.arguments ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
      usage = part.usage ?? usage;
    }
    expect(upstream.requests[0]!.body.tools).toHaveLength(1);
    expect([name, args, finish, usage]).toEqual(['get_weather', '{"city":"Paris"}', 'tool_calls', UPSTREAM_USAGE]);
  });

  it('passes chunks through in order before the upstream has finished', async () => {
    let clientSawFirst!: () => void;
    const gate = new Promise<void>((resolve) => (clientSawFirst = resolve));
    let heldBack = false;
    upstream.handler = async (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: '' }));
      res.write(chunk({ content: 'one' }));
      // The rest waits for the client: a buffering proxy would never deliver chunk one in time.
      heldBack = await Promise.race([
        gate.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
      ]);
      for (const word of [' two', ' three']) res.write(chunk({ content: word }));
      res.write(chunk({}, 'stop'));
      res.write(usageChunk(UPSTREAM_USAGE));
      res.end('data: [DONE]\n\n');
    };
    const res = await post({ model: 'up-model', stream: true }, 'req-up-stream');
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.includes('"one"')) clientSawFirst();
    }
    expect(heldBack).toBe(true);
    const data = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(data.at(-1)).toBe('[DONE]');
    const contents = data.slice(0, -1).map((d) => JSON.parse(d).choices[0]?.delta?.content);
    expect(contents.join('')).toBe('one two three');
    // Plaza asked for usage, and hid the usage-only chunk from a client that did not.
    expect(upstream.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(data.some((d) => d.includes('"usage":{'))).toBe(false);
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-stream' } }))
      .toMatchObject({ totalTokens: 18 });
  });

  it('passes the upstream usage chunk to a client that asks for it (openai client)', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Hey' }));
      res.write(chunk({}, 'stop'));
      res.write(usageChunk(UPSTREAM_USAGE));
      res.end('data: [DONE]\n\n');
    };
    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'fast',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    let text = '';
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      usage = part.usage ?? usage;
    }
    expect(text).toBe('Hey');
    expect(usage).toEqual(UPSTREAM_USAGE);
  });

  // The AI SDK reads cacheReadTokens and reasoningTokens from these details; they were dropped.
  it('passes the upstream usage details (cached and reasoning tokens) on, in an answer and in a stream (openai client)', async () => {
    const detailed = {
      ...UPSTREAM_USAGE,
      prompt_tokens_details: { cached_tokens: 4, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 3,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    upstream.handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-up',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
          usage: detailed,
        }),
      );
    };
    const answer = await client.chat.completions.create({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.usage).toEqual(detailed);
    // In a stream the details come in the upstream's usage chunk, or on its finishing chunk (llama.cpp).
    for (const where of ['usage chunk', 'finishing chunk']) {
      upstream.handler = (_req, _body, res) => {
        sseHead(res);
        res.write(chunk({ role: 'assistant', content: 'Hey' }));
        if (where === 'usage chunk') {
          res.write(chunk({}, 'stop'));
          res.write(
            `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [], usage: detailed })}\n\n`,
          );
        } else {
          res.write(chunk({}, 'stop', { usage: detailed }));
        }
        res.end('data: [DONE]\n\n');
      };
      const stream = await client.chat.completions.create({
        model: 'up-model',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const usages: unknown[] = [];
      for await (const part of stream) if (part.usage) usages.push(part.usage);
      expect(usages, where).toEqual([detailed]);
    }
    // Usage that is not believable is replaced by the approximation, details and all.
    upstream.handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-up',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
          usage: { ...detailed, prompt_tokens: -1 },
        }),
      );
    };
    const odd = await client.chat.completions.create({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(Object.keys(odd.usage!).sort()).toEqual(['completion_tokens', 'prompt_tokens', 'total_tokens']);
  });

  it('retries an upstream 500 once, then answers 502 INTERNAL_ERROR without the upstream body', async () => {
    upstream.handler = (_req, _body, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"secret internal detail"}}');
    };
    for (const stream of [false, true]) {
      upstream.requests = [];
      const res = await post({ model: 'up-model', stream });
      expect(res.status).toBe(502);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ success: false, code: 'INTERNAL_ERROR', error: { type: 'api_error' } });
      expect(body).not.toMatch(/secret internal detail/);
      expect(upstream.requests).toHaveLength(2);
    }
  });

  it('makes 1 + LLM_MAX_RETRIES attempts in all on an upstream that resets every connection, then answers 502', async () => {
    for (const stream of [false, true]) {
      // A completion first, so that Plaza's next request goes out on a kept-alive connection,
      // whose reset looks like one the upstream closed while it sat idle.
      upstream.handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 1,
            model: 'up-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: UPSTREAM_USAGE,
          }),
        );
      };
      expect((await post({ model: 'up-model' })).status).toBe(200);
      upstream.handler = (req) => void req.socket.destroy();
      upstream.requests = [];
      const res = await post({ model: 'up-model', stream });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({
        code: 'INTERNAL_ERROR',
        error: { type: 'api_error' },
        message: 'The model backend could not be reached.',
      });
      expect(upstream.requests).toHaveLength(2);
    }
  });

  it.each([
    [
      'OpenAI / vLLM / Ollama',
      400,
      {
        error: {
          message: "Invalid schema for function 'f': 'objekt' is not valid.",
          type: 'invalid_request_error',
          param: 'tools[0].function.parameters',
          code: null,
        },
      },
      'tools[0].function.parameters',
    ],
    [
      'llama.cpp',
      400,
      {
        error: {
          code: 400,
          message: "Invalid schema for function 'f': 'objekt' is not valid.",
          type: 'invalid_request_error',
        },
      },
      null,
    ],
    ['TGI', 422, { error: "Invalid schema for function 'f': 'objekt' is not valid.", error_type: 'validation' }, null],
  ])(
    'relays the message of an upstream rejection of the request (%s) as a BadRequestError',
    async (_name, status, body, param) => {
      upstream.handler = (_req, _body, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
      for (const stream of [false, true]) {
        const error = await client.chat.completions
          .create({
            model: 'up-model',
            stream,
            messages: [{ role: 'user', content: 'hi' }],
            tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'objekt' } } }],
          })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(
          /rejected the request: Invalid schema for function 'f'/,
        );
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
      }
    },
  );

  it('maps an upstream 429 to 429 RATE_LIMITED with its Retry-After, without retrying', async () => {
    upstream.handler = (_req, _body, res) => {
      res.writeHead(429, { 'retry-after': '7' });
      res.end();
    };
    const res = await post({ model: 'up-model' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(upstream.requests).toHaveLength(1);
    // An upstream's absurd advice is capped at an hour, in whole seconds.
    for (const [given, passed] of [
      ['1e308', '3600'],
      ['2.5', '3'],
    ]) {
      upstream.handler = (_req, _body, r) => void r.writeHead(429, { 'retry-after': given }).end();
      expect((await post({ model: 'up-model' })).headers.get('retry-after')).toBe(passed);
    }
  });

  it('passes on an upstream Retry-After given as an HTTP-date, as seconds from now', async () => {
    const inAbout = (seconds: number) => new Date(Date.now() + seconds * 1000).toUTCString();
    for (const [given, low, high] of [
      [inAbout(30), 28, 31],
      // RFC 9110's obsolete forms, which recipients must accept too.
      [
        inAbout(90).replace(
          /^(\w+), (\d+) (\w+) (\d+)/,
          (_m, day: string, d: string, mon: string, y: string) =>
            `${{ Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday', Sun: 'Sunday' }[day]}, ${d}-${mon}-${y.slice(2)}`,
        ),
        88,
        91,
      ],
      // A date already past: retry at once, which Plaza says as its least, 1 second.
      ['Thu, 01 Jan 1970 00:00:00 GMT', 1, 1],
      // A date a year away is capped at an hour like delta-seconds.
      [inAbout(365 * 86_400), 3600, 3600],
    ] as const) {
      upstream.handler = (_req, _body, r) => void r.writeHead(429, { 'retry-after': given }).end();
      for (const stream of [false, true]) {
        const res = await post({ model: 'up-model', stream });
        expect(res.status, given).toBe(429);
        expect(((await res.json()) as any).error, given).toMatchObject({
          type: 'rate_limit_error',
          code: 'RATE_LIMITED',
        });
        const seconds = Number(res.headers.get('retry-after'));
        expect(seconds, given).toBeGreaterThanOrEqual(low);
        expect(seconds, given).toBeLessThanOrEqual(high);
      }
    }
    // Not a date nor seconds: Plaza's own default advice.
    upstream.handler = (_req, _body, r) => void r.writeHead(429, { 'retry-after': 'soon' }).end();
    expect((await post({ model: 'up-model' })).headers.get('retry-after')).toBe('5');
  });

  it.each([
    ['a stream after LLM_TIMEOUT_MS', true, 5_000],
    ['a completion after LLM_COMPLETION_TIMEOUT_MS', false, 9_000],
  ])('gives up on a silent upstream of %s and one retry', async (_name, stream, within) => {
    upstream.handler = () => undefined; // never answers
    const started = Date.now();
    const res = await post({ model: 'up-model', stream });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).message).toMatch(/timed out/);
    expect(upstream.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(within);
  });

  it('waits longer than LLM_TIMEOUT_MS for a non-streamed answer, whose headers come with the whole completion', async () => {
    upstream.handler = (_req, _body, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-up',
            object: 'chat.completion',
            created: 1,
            model: 'up-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Slow but sure.' }, finish_reason: 'stop' }],
            usage: UPSTREAM_USAGE,
          }),
        );
      }, 1_200);
    };
    const res = await post({ model: 'up-model' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe('Slow but sure.');
    expect(upstream.requests).toHaveLength(1);
  });

  it('turns a disconnect mid-stream into an SSE error event (APIError in the openai client)', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Par' }));
      res.write(chunk({ content: 'tial' }));
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const raw = await post({ model: 'up-model', stream: true }, 'req-up-broken');
    expect(raw.status).toBe(200);
    const events = (await raw.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events).not.toContain('[DONE]');
    expect(JSON.parse(events.at(-1)!)).toMatchObject({
      error: { type: 'api_error', code: 'INTERNAL_ERROR', message: expect.any(String) },
    });
    expect(
      events
        .slice(0, 2)
        .map((e) => JSON.parse(e).choices[0].delta.content)
        .join(''),
    ).toBe('Partial');
    // Broken streams are still charged (approximated: the upstream never sent usage).
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-broken' } }))
      .toMatchObject({ completionTokens: 2 });

    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    const error = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('Partial');
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });

  it('charges an approximation when a complete stream reports no usage', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      // "Hello" (1) + " wonderful" (2: nine letters, pieces of six) + " world" (1) + "!" (1) = 5.
      for (const [i, word] of ['Hello', ' wonderful', ' world', '!'].entries())
        res.write(chunk(i === 0 ? { role: 'assistant', content: word } : { content: word }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    };
    const res = await post({ model: 'up-model', stream: true }, 'req-up-nousage');
    expect((await res.text()).trim().endsWith('data: [DONE]')).toBe(true);
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-nousage' } }))
      .toMatchObject({ completionTokens: 5 });
  });

  describe('usage in a stream, as OpenAI sends it', () => {
    // Upstreams differ: vLLM with continuous_usage_stats reports usage on every chunk, llama.cpp on
    // the finish_reason chunk, OpenAI `usage: null` on every chunk then a usage-only chunk; some
    // send the finishing chunk's usage and a usage-only chunk both.
    const upstreams: [string, () => string[]][] = [
      [
        'usage on the finish_reason chunk and a usage-only chunk, usage: null before',
        () => [
          chunk({ role: 'assistant', content: 'Hel' }, null, { usage: null }),
          chunk({ content: 'lo' }, null, { usage: null }),
          chunk({}, 'stop', { usage: UPSTREAM_USAGE }),
          usageChunk(UPSTREAM_USAGE),
        ],
      ],
      [
        'usage on the finish_reason chunk only (llama.cpp)',
        () => [
          chunk({ role: 'assistant', content: 'Hel' }),
          chunk({ content: 'lo' }),
          chunk({}, 'stop', { usage: UPSTREAM_USAGE }),
        ],
      ],
      [
        'usage on every chunk (vLLM continuous_usage_stats)',
        () => [
          chunk({ role: 'assistant', content: 'Hel' }, null, {
            usage: { prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 },
          }),
          chunk({ content: 'lo' }, null, { usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 } }),
          chunk({}, 'stop', { usage: UPSTREAM_USAGE }),
          usageChunk(UPSTREAM_USAGE),
        ],
      ],
    ];
    const streamed = async (events: string[], includeUsage: boolean | undefined) => {
      upstream.handler = (_req, _body, res) => {
        sseHead(res);
        for (const event of events) res.write(event);
        res.end('data: [DONE]\n\n');
      };
      const text = await (
        await post({
          model: 'up-model',
          stream: true,
          ...(includeUsage === undefined ? {} : { stream_options: { include_usage: includeUsage } }),
        })
      ).text();
      const data = text
        .split('\n\n')
        .filter(Boolean)
        .map((e) => e.replace(/^data: /, ''));
      expect(data.at(-1)).toBe('[DONE]');
      return data
        .slice(0, -1)
        .map((d) => JSON.parse(d) as { choices: { delta: { content?: string } }[]; usage?: unknown });
    };

    it.each(upstreams)('gives a client that did not ask for usage none: %s', async (_name, events) => {
      for (const includeUsage of [undefined, false]) {
        const chunks = await streamed(events(), includeUsage);
        expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello');
        expect(chunks.filter((c) => 'usage' in c)).toEqual([]);
        expect(chunks.filter((c) => c.choices.length === 0)).toEqual([]);
      }
    });

    it.each(upstreams)(
      'gives a client that asked for usage exactly one usage chunk, last, with empty choices: %s',
      async (_name, events) => {
        const chunks = await streamed(events(), true);
        expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello');
        expect(chunks.filter((c) => c.usage !== undefined && c.usage !== null)).toEqual([chunks.at(-1)]);
        expect(chunks.at(-1)).toEqual({
          id: 'chatcmpl-up',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'up-model',
          choices: [],
          usage: UPSTREAM_USAGE,
        });
        // The openai client sees the same: one part with usage, after the finish_reason.
        const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
        const stream = await client.chat.completions.create({
          model: 'up-model',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const parts: OpenAI.ChatCompletionChunk[] = [];
        for await (const part of stream) parts.push(part);
        expect(parts.filter((p) => p.usage)).toEqual([parts.at(-1)]);
        expect(parts.at(-1)!.usage).toEqual(UPSTREAM_USAGE);
        expect(parts.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      },
    );
  });

  it('sends a client that asked for usage the charged approximation when the upstream reports none', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      // An upstream that ignores stream_options (older Ollama, LM Studio): no usage at all.
      for (const [i, word] of ['Hello', ' wonderful', ' world', '!'].entries())
        res.write(chunk(i === 0 ? { role: 'assistant', content: word } : { content: word }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    };
    const client = new OpenAI({
      apiKey: token,
      baseURL: `${plaza.url}/api/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-request-id': 'req-up-usage-asked' },
    });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const parts: OpenAI.ChatCompletionChunk[] = [];
    for await (const part of stream) parts.push(part);
    const last = parts.at(-1)!;
    expect(last).toMatchObject({ id: 'chatcmpl-up', object: 'chat.completion.chunk', model: 'up-model', choices: [] });
    expect(last.usage?.completion_tokens).toBe(5);
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-usage-asked' } }))
      .toMatchObject({
        promptTokens: last.usage!.prompt_tokens,
        completionTokens: 5,
        totalTokens: last.usage!.total_tokens,
      });
  });

  it('ends a finished answer properly when the upstream ends it without [DONE] (ik_llama.cpp), but not an unfinished one', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Done' }));
      res.end(chunk({}, 'stop', { usage: UPSTREAM_USAGE }));
    };
    const finished = await (await post({ model: 'up-model', stream: true })).text();
    expect(finished.trim().endsWith('data: [DONE]')).toBe(true);
    expect(finished).not.toMatch(/"error"/);

    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.end(chunk({ role: 'assistant', content: 'Half' }));
    };
    const cut = (await (await post({ model: 'up-model', stream: true })).text()).split('\n\n').filter(Boolean);
    expect(JSON.parse(cut.at(-1)!.replace(/^data: /, ''))).toMatchObject({
      error: { message: expect.stringMatching(/ended the stream early/) },
    });
  });

  it('passes a chunk the upstream spread over several data lines as one event the openai client reads', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      const pretty = JSON.stringify(
        {
          id: 'chatcmpl-up',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'Pretty' }, finish_reason: null }],
        },
        null,
        2,
      );
      res.write(
        `${pretty
          .split('\n')
          .map((line) => `data: ${line}`)
          .join('\n')}\n\n`,
      );
      res.write(chunk({}, 'stop'));
      res.write(usageChunk(UPSTREAM_USAGE));
      res.end('data: [DONE]\n\n');
    };
    const client = new OpenAI({ apiKey: token, baseURL: `${plaza.url}/api/v1`, maxRetries: 0 });
    let text = '';
    for await (const part of await client.chat.completions.create({
      model: 'up-model',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    }))
      text += part.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Pretty');
  });

  it('ends a stream on an event larger than 4 MiB with an error event', async () => {
    upstream.handler = async (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Fine' }));
      res.write('data: ');
      const block = 'x'.repeat(64 * 1024);
      for (let sent = 0; sent < 5 * 1024 * 1024 && !res.destroyed; sent += block.length) {
        if (!res.write(block)) await drainedOrClosed(res);
      }
      res.end();
    };
    const res = await post({ model: 'up-model', stream: true });
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(JSON.parse(events[0]!).choices[0].delta.content).toBe('Fine');
    expect(JSON.parse(events.at(-1)!)).toMatchObject({
      error: { code: 'INTERNAL_ERROR', message: expect.stringMatching(/broke off/) },
    });
  });

  it('takes only believable usage from the upstream, and one odd request costs no other its usage row', async () => {
    const reply = (usage: unknown) => (_req: IncomingMessage, _body: Record<string, any>, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-up',
          object: 'chat.completion',
          created: 1,
          model: 'up-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
          usage,
        }),
      );
    };
    upstream.handler = reply({ prompt_tokens: 1e20, completion_tokens: 5, total_tokens: -7 });
    const odd = await post({ model: 'up-model' }, 'req-up-odd-usage');
    expect(odd.status).toBe(200);
    // Not the upstream's figures: an approximation of the text, as for no usage at all.
    expect(((await odd.json()) as any).usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    });
    upstream.handler = reply({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 1 });
    expect((await post({ model: 'up-model' }, 'req-up-small-total')).status).toBe(200);
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-small-total' } }))
      .toMatchObject({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    const stored = await plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-odd-usage' } });
    expect(stored!.promptTokens).toBeLessThan(1_000);
    expect(stored!.totalTokens).toBe(stored!.promptTokens + stored!.completionTokens);
  });

  it.each([
    ['a malformed chunk', 'data: {"id":"chatcmpl-up","choices":[{"delta":{"content":"cut\n\n', /malformed/],
    [
      'an error chunk',
      `data: ${JSON.stringify({ error: { message: 'secret upstream detail', type: 'server_error' } })}\n\n`,
      /failed during the stream/,
    ],
  ])('ends a stream on %s with an error event, without passing it on', async (_name, bad, message) => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Fine' }));
      res.write(bad);
      res.end('data: [DONE]\n\n');
    };
    const res = await post({ model: 'up-model', stream: true });
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(JSON.parse(events[0]!).choices[0].delta.content).toBe('Fine');
    expect(events).toHaveLength(2);
    expect(JSON.parse(events[1]!)).toMatchObject({
      error: { code: 'INTERNAL_ERROR', message: expect.stringMatching(message) },
    });
    expect(events[1]).not.toMatch(/secret upstream detail/);
  });

  it('ends a stream whose upstream goes silent mid-way with a timeout error event', async () => {
    upstream.handler = async (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Hel' }));
      res.write(chunk({ content: 'lo' }));
      // …then nothing, while keeping the connection open.
    };
    const res = await post({ model: 'up-model', stream: true });
    const text = await res.text();
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(
      events
        .slice(0, 2)
        .map((e) => e.choices[0].delta.content)
        .join(''),
    ).toBe('Hello');
    expect(events.at(-1)).toMatchObject({
      error: { code: 'INTERNAL_ERROR', message: expect.stringMatching(/timed out/) },
    });
  });

  it('keeps a stream alive on keep-alive comments past LLM_TIMEOUT_MS, and ends it at LLM_COMPLETION_TIMEOUT_MS', async () => {
    let timer: NodeJS.Timeout | undefined;
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Hel' }));
      // Comments well within LLM_TIMEOUT_MS (700 ms here), for ever: a sign of life, never a chunk.
      timer = setInterval(() => res.write(': keep-alive\n\n'), 100);
      res.on('close', () => clearInterval(timer));
    };
    const started = Date.now();
    const res = await post({ model: 'up-model', stream: true }, undefined, AbortSignal.timeout(8_000));
    const text = await res.text();
    const took = Date.now() - started;
    clearInterval(timer);
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(events[0].choices[0].delta.content).toBe('Hel');
    expect(events.at(-1)).toMatchObject({
      error: { code: 'INTERNAL_ERROR', message: expect.stringMatching(/timed out/) },
    });
    // LLM_COMPLETION_TIMEOUT_MS is 2000 ms here, LLM_TIMEOUT_MS 700 ms.
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(5_000);
    await upstream.closed;
  });

  it('cuts a stream whose client stopped reading, and with it the upstream request', async () => {
    upstream.handler = async (_req, _body, res) => {
      sseHead(res);
      const big = 'x'.repeat(60_000);
      for (let i = 0; i < 2_000 && !res.destroyed; i++) {
        if (!res.write(chunk(i === 0 ? { role: 'assistant', content: big } : { content: big })))
          await drainedOrClosed(res);
      }
      res.end('data: [DONE]\n\n');
    };
    const body = JSON.stringify({ model: 'up-model', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    // A guest of its own: what the kernel's buffers took before the stall (megabytes of text) is
    // charged, and would use up the day's budget of the bearer the other tests share.
    const guest = ((await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as any).data
      .token;
    const socket = connect(Number(new URL(plaza.url).port), '127.0.0.1');
    socket.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: plaza\r\nAuthorization: Bearer ${guest}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Never read: the kernel's buffers fill, then Plaza's writes stop draining.
    socket.pause();
    try {
      await expect.poll(() => upstream.requests.length).toBe(1);
      // The upstream sees its request end (LLM_TIMEOUT_MS is 700 ms here) while the client is still connected.
      await upstream.closed;
      expect(socket.destroyed).toBe(false);
    } finally {
      socket.destroy();
    }
  });

  it('charges a 10 MB answer of one word whose upstream reports no usage by the approximation', async () => {
    // 10 MB of one letter: the regex count it replaced overflowed V8's backtrack stack from 8 MB
    // (RangeError, thrown inside undici's callbacks: an uncaught exception).
    const piece = 'x'.repeat(64 * 1024);
    const pieces = 160;
    upstream.handler = async (_req, _body, res) => {
      sseHead(res);
      for (let i = 0; i < pieces && !res.destroyed; i++) {
        if (!res.write(chunk(i === 0 ? { role: 'assistant', content: piece } : { content: piece })))
          await drainedOrClosed(res);
      }
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    };
    // A guest of its own: 1.7 M tokens use up a day's budget.
    const guest = ((await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as any).data
      .token;
    const res = await fetch(`${plaza.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${guest}`,
        'content-type': 'application/json',
        'x-request-id': 'req-up-one-word',
      },
      body: JSON.stringify({
        model: 'up-model',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e !== '')
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const completion = Math.ceil((pieces * piece.length) / 6);
    expect(JSON.parse(events.at(-2)!).usage).toMatchObject({ completion_tokens: completion });
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-one-word' } }))
      .toMatchObject({ completionTokens: completion });
  });

  it('charges the prompt of a non-streamed completion whose client left while the upstream worked on it', async () => {
    upstream.handler = (_req, _body, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-up',
            object: 'chat.completion',
            created: 1,
            model: 'up-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Too late.' }, finish_reason: 'stop' }],
            usage: UPSTREAM_USAGE,
          }),
        );
      }, 1_000);
    };
    const controller = new AbortController();
    const request = post({ model: 'up-model' }, 'req-up-left', controller.signal).catch((error: unknown) => error);
    await expect.poll(() => upstream.requests.length).toBe(1);
    controller.abort();
    await request;
    await upstream.closed;
    // "Hello there": 2 words + 4 framing + 3 priming.
    await expect
      .poll(() => plaza.db.prisma.chatUsage.findFirst({ where: { requestId: 'req-up-left' } }))
      .toMatchObject({ promptTokens: 9, completionTokens: 0, totalTokens: 9 });
  });

  it('cancels the upstream request when the client goes away', async () => {
    upstream.handler = (_req, _body, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Stay' }));
      // …and never finishes on its own.
    };
    const controller = new AbortController();
    const res = await post({ model: 'up-model', stream: true }, undefined, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(
      Promise.race([
        upstream.closed.then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still open'), 3_000)),
      ]),
    ).resolves.toBe('closed');
  });

  it('keeps the embedded assistant available next to the upstream models', async () => {
    const models: any = await (
      await fetch(`${plaza.url}/api/v1/models`, { headers: { authorization: `Bearer ${token}` } })
    ).json();
    expect(models.data.map((m: { id: string }) => m.id).sort()).toEqual(['fast', 'plaza-assistant', 'up-model']);
    const res = await post({ model: 'plaza-assistant' });
    expect(res.status).toBe(200);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('the upstream connection pool', () => {
  it.each([0, 1, 2])('sends a request %i extra times when every fresh connection is reset', async (maxRetries) => {
    let requests = 0;
    const server = createServer((req) => {
      requests++;
      req.socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const backend = createUpstreamBackend({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        apiKey: undefined,
        timeoutMs: 2_000,
        maxRetries,
      });
      const call = {
        request: parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 4096, true),
        backendModel: 'm',
        locale: undefined,
        signal: new AbortController().signal,
      };
      await expect(backend.complete(call)).rejects.toThrow(/could not be reached/);
      expect(requests).toBe(1 + maxRetries);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // Closed (FIN: undici's socket error) or reset (RST: the bare ECONNRESET, with nothing about the socket).
  it.each(['destroy', 'resetAndDestroy'] as const)(
    'resends a request whose pooled connection the upstream had closed (%s), even with no retry left',
    async (close) => {
      // The upstream answers the first request on a connection and drops the connection on the next.
      const served = new WeakSet<object>();
      let requests = 0;
      const server = createServer((req, res) => {
        requests++;
        if (served.has(req.socket)) {
          req.socket[close]();
          return;
        }
        served.add(req.socket);
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'c',
              object: 'chat.completion',
              created: 1,
              model: 'm',
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
              usage: UPSTREAM_USAGE,
            }),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const backend = createUpstreamBackend({
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
          apiKey: undefined,
          timeoutMs: 2_000,
          maxRetries: 0,
        });
        const call = {
          request: parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 4096, true),
          backendModel: 'm',
          locale: undefined,
          signal: new AbortController().signal,
        };
        expect((await backend.complete(call)).usage).toEqual(UPSTREAM_USAGE);
        // Let the connection go back to the pool, then reuse it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect((await backend.complete(call)).usage).toEqual(UPSTREAM_USAGE);
        expect(requests).toBe(3);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );
});

describe('the relay of an upstream stream', () => {
  /** An upstream that sends one chunk and never ends; `closed` resolves when Plaza cuts it. */
  async function endlessUpstream() {
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => (markClosed = resolve));
    const server = createServer((req, res) => {
      req.resume();
      res.on('close', () => markClosed());
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Hi' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const backend = createUpstreamBackend({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      apiKey: undefined,
      timeoutMs: 2_000,
      maxRetries: 0,
    });
    const call = {
      request: parseChatRequest({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, 4096, true),
      backendModel: 'm',
      locale: undefined,
      signal: new AbortController().signal,
    };
    const stop = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
    return { closed, stream: await backend.stream(call), stop };
  }

  it('lets nothing escape into undici when the sink throws while it is being ended', async () => {
    const upstream = await endlessUpstream();
    try {
      let ends = 0;
      upstream.stream.start({
        events() {
          throw new Error('sink broke');
        },
        end() {
          ends++;
          throw new Error('its end broke too');
        },
      });
      // The upstream is cut all the same, the sink was told the end once, and no uncaught
      // exception reaches the test run (vitest fails a run that has one).
      await upstream.closed;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(ends).toBe(1);
      expect(upstream.stream.usage()).toMatchObject({ completion_tokens: 1 });
    } finally {
      await upstream.stop();
    }
  });
});

/**
 * Plain chat completions are answered in a lane before Express (src/routes/token-api.ts); every
 * other request to the route goes through Express. The same request is sent both ways here (a
 * query string sends it through Express) and must get the same answer: status, headers (but the
 * ones that differ per answer) and body (but ids and times), for completions and for every kind
 * of refusal. And the lane must be the one taken: its answers carry no trace of Express.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPlaza } from '../../src/app/create-app.ts';
import { startServer } from '../../src/app/server.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

/** Headers that differ between two answers to the same request. */
const VARYING = new Set([
  'date',
  'x-request-id',
  'ratelimit',
  'content-length',
  'etag',
  'keep-alive',
  'connection',
  'transfer-encoding',
]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** An answer with what varies per answer taken out. */
async function answer(res: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!VARYING.has(name)) headers[name] = value;
  });
  const text = await res.text();
  const body = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ? text
        .split('\n\n')
        .filter(Boolean)
        .map((event) => stable(event === 'data: [DONE]' ? event : JSON.parse(event.replace(/^data: /, ''))))
    : stable(JSON.parse(text));
  return { status: res.status, headers, body };
}

/** A body with its ids and times replaced, so two answers can be compared. */
function stable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, v) => (['id', 'request_id', 'created'].includes(key) ? '…' : v));
}

describe('the chat completion lane', () => {
  let plaza: TestPlaza;
  let token: string;
  beforeAll(async () => {
    plaza = await startTestPlaza('pglite', { env: { PLAZA_BODY_LIMIT_BYTES: '4096', CHAT_RPM_PER_SUBJECT: '1000' } });
    token = (
      (await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as {
        data: { token: string };
      }
    ).data.token;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const both = async (init: { headers?: Record<string, string>; body: string }) => {
    const send = (query: string) =>
      fetch(`${plaza.url}/api/v1/chat/completions${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...init.headers },
        body: init.body,
      });
    const lane = await send('');
    const express = await send('?via=express');
    return { lane: await answer(lane), express: await answer(express) };
  };
  const ask = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ model: 'plaza-assistant', messages: [{ role: 'user', content: 'What is AGPK?' }], ...extra });

  it.each([
    ['a completion', () => ({ headers: { authorization: `Bearer ${token}` }, body: ask() })],
    [
      'a streamed completion',
      () => ({
        headers: { authorization: `Bearer ${token}` },
        body: ask({ stream: true, stream_options: { include_usage: true } }),
      }),
    ],
    ['no bearer', () => ({ body: ask() })],
    ['a malformed bearer', () => ({ headers: { authorization: 'Bearer nope' }, body: ask() })],
    ['malformed JSON', () => ({ headers: { authorization: `Bearer ${token}` }, body: '{"model":' })],
    [
      'a body past the limit',
      () => ({
        headers: { authorization: `Bearer ${token}` },
        body: ask({ messages: [{ role: 'user', content: 'x'.repeat(5000) }] }),
      }),
    ],
    [
      'a wrong role',
      () => ({
        headers: { authorization: `Bearer ${token}` },
        body: ask({ messages: [{ role: 'wizard', content: 'hi' }] }),
      }),
    ],
    [
      'an unknown model',
      () => ({ headers: { authorization: `Bearer ${token}` }, body: ask({ model: 'no-such-model' }) }),
    ],
    [
      'a NUL in a message',
      () => ({
        headers: { authorization: `Bearer ${token}` },
        body: ask({ messages: [{ role: 'user', content: 'a\u0000b' }] }),
      }),
    ],
  ])('answers %s as Express does', async (_name, request) => {
    const { lane, express } = await both(request());
    expect(lane).toEqual(express);
  });

  it('logs a completion it answers as the app does', async () => {
    const res = await fetch(`${plaza.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-request-id': 'lane-check-1' },
      body: ask(),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('lane-check-1');
    await expect
      .poll(() =>
        plaza
          .logLines()
          .some((line) => line.includes('"request_id":"lane-check-1"') && line.includes('request completed')),
      )
      .toBe(true);
  });

  it('is the path a plain completion takes; the others go to Express', async () => {
    const composed = createPlaza({ config: plaza.config, db: plaza.db, log: plaza.log });
    const seen: string[] = [];
    // Express's entry point for every request it answers (not in its types).
    const app = composed.app as unknown as {
      handle: (req: IncomingMessage, res: ServerResponse, next?: () => void) => void;
    };
    const handle = app.handle.bind(app);
    app.handle = (req, res, next) => {
      seen.push(`${req.method} ${req.url}`);
      handle(req, res, next);
    };
    const server = await startServer(composed.handler, { port: 0, host: '127.0.0.1' });
    try {
      const post = (path: string, type = 'application/json') =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': type, authorization: `Bearer ${token}` },
          body: ask(),
        });
      expect((await post('/api/v1/chat/completions')).status).toBe(200);
      expect((await post('/api/v1/chat/completions', 'application/json; charset=UTF-8')).status).toBe(200);
      expect(seen).toEqual([]);
      expect((await post('/api/v1/chat/completions?x=1')).status).toBe(200);
      expect((await post('/api/v1/chat/completions', 'application/vnd.api+json')).status).toBe(200);
      expect(seen).toEqual(['POST /api/v1/chat/completions?x=1', 'POST /api/v1/chat/completions']);
    } finally {
      await server.stop();
      await composed.close();
    }
  });
});

/**
 * JSON request bodies are read two ways (src/http/json-body.ts): a plain UTF-8 body by Plaza's own
 * reader, a compressed one (or one in another charset) by body-parser. Every case here is sent
 * both ways, gzip-compressed and not, and must get the same answer: the same status, error code,
 * message and param, or the same completion. Without a Content-Length (chunked), too.
 */
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const LIMIT = 2048;

interface Answer {
  status: number;
  code: unknown;
  message: unknown;
  param: unknown;
  content: unknown;
}

/** POSTs `body` to the chat completion route, as it is or gzip-compressed, with or without a length. */
function post(
  url: string,
  token: string,
  body: Buffer,
  options: { gzip: boolean; chunked: boolean; type?: string },
): Promise<Answer> {
  const payload = options.gzip ? gzipSync(body) : body;
  const headers: Record<string, string> = {
    'content-type': options.type ?? 'application/json',
    authorization: `Bearer ${token}`,
  };
  if (options.gzip) headers['content-encoding'] = 'gzip';
  headers[options.chunked ? 'transfer-encoding' : 'content-length'] = options.chunked
    ? 'chunked'
    : String(payload.length);
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const json = JSON.parse(Buffer.concat(parts).toString()) as {
          code?: unknown;
          message?: unknown;
          error?: { param?: unknown };
          choices?: { message?: { content?: unknown } }[];
        };
        resolve({
          status: res.statusCode!,
          code: json.code,
          message: json.message,
          param: json.error?.param,
          content: json.choices?.[0]?.message?.content,
        });
      });
    });
    req.on('error', reject);
    // Chunked bodies go in two writes, so the reader meets a body in pieces.
    if (options.chunked && payload.length > 1) {
      req.write(payload.subarray(0, payload.length >> 1));
      req.end(payload.subarray(payload.length >> 1));
    } else req.end(payload);
  });
}

const ask = (content: string) => JSON.stringify({ model: 'plaza-assistant', messages: [{ role: 'user', content }] });

const CASES: Array<[string, Buffer, number]> = [
  ['a valid request', Buffer.from(ask('What is AGPK?')), 200],
  [
    'a byte-order mark before the JSON',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(ask('What is AGPK?'))]),
    200,
  ],
  ['malformed JSON', Buffer.from('{"model": "plaza-assistant", "messages": ['), 400],
  [
    'bytes that are not UTF-8',
    Buffer.concat([
      Buffer.from('{"model":"plaza-assistant","messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]),
    400,
  ],
  ['a NUL escape in a message', Buffer.from(ask('a\\u0000b').replace('\\\\u0000', '\\u0000')), 400],
  ['JSON that is not an object', Buffer.from('["model"]'), 400],
  // The token API answers 413 and 415 as its one 400 (spec §7); the message says which.
  ['a body past the limit', Buffer.from(ask('x'.repeat(LIMIT * 2))), 400],
];

describe('JSON bodies read directly and through body-parser', () => {
  let plaza: TestPlaza;
  let token: string;
  beforeAll(async () => {
    plaza = await startTestPlaza('pglite', { env: { PLAZA_BODY_LIMIT_BYTES: String(LIMIT) } });
    token = (
      (await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as {
        data: { token: string };
      }
    ).data.token;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it.each(CASES)(
    '%s gets the same answer plain and compressed, with a length and chunked',
    async (_name, body, status) => {
      const plain = await post(plaza.url, token, body, { gzip: false, chunked: false });
      expect(plain.status).toBe(status);
      expect(await post(plaza.url, token, body, { gzip: true, chunked: false })).toEqual(plain);
      expect(await post(plaza.url, token, body, { gzip: false, chunked: true })).toEqual(plain);
      expect(await post(plaza.url, token, body, { gzip: true, chunked: true })).toEqual(plain);
      expect(
        await post(plaza.url, token, body, { gzip: false, chunked: false, type: 'application/json; Charset=UTF-8' }),
      ).toEqual(plain);
    },
  );

  it('reads an empty chunked body as {} on both paths (a 400 naming the missing field)', async () => {
    const plain = await post(plaza.url, token, Buffer.alloc(0), { gzip: false, chunked: true });
    expect(plain).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(await post(plaza.url, token, Buffer.alloc(0), { gzip: true, chunked: true })).toEqual(plain);
  });

  it('says which limit a body past it broke, on both paths', async () => {
    const body = Buffer.from(ask('x'.repeat(LIMIT * 2)));
    expect(await post(plaza.url, token, body, { gzip: false, chunked: true })).toMatchObject({
      message: `Request body exceeds the limit of ${LIMIT} bytes.`,
    });
  });

  it('refuses a charset other than UTF-8 on the path that reads it', async () => {
    const answer = await post(plaza.url, token, Buffer.from(ask('hi')), {
      gzip: false,
      chunked: false,
      type: 'application/json; charset=latin1',
    });
    expect(answer).toMatchObject({ status: 400, message: 'Request body must be UTF-8 JSON.' });
  });
});

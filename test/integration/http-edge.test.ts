/**
 * Pins the HTTP edge every surface shares: /health per spec §2.14, X-Request-Id, and the error
 * shapes for unknown routes, malformed JSON, wrong content types and oversized bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe.each(BACKENDS)('HTTP edge on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { PLAZA_BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  describe('GET /health', () => {
    it('answers every §2.14 field with status ok', async () => {
      const res = await fetch(`${plaza.url}/health`);
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body).toMatchObject({
        status: 'ok',
        service: 'plaza',
        shared_envelope: { success: true, code: 'SUCCESS', message: expect.any(String), data: { status: 'ok', service: 'plaza' } },
      });
      expect(body.request_id).toBe(res.headers.get('x-request-id'));
    });

    it('echoes a well-formed caller request id and replaces a malformed one', async () => {
      const echoed = await fetch(`${plaza.url}/health`, { headers: { 'x-request-id': 'trace-123.abc' } });
      expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc');
      expect(((await echoed.json()) as any).request_id).toBe('trace-123.abc');
      const replaced = await fetch(`${plaza.url}/health`, { headers: { 'x-request-id': 'bad id <script>' } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^req_[0-9a-z]+$/);
    });
  });

  describe('errors', () => {
    it('answers an unknown route with a JSON 404', async () => {
      const res = await fetch(`${plaza.url}/api/nothing-here`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body: any = await res.json();
      expect(body).toMatchObject({ success: false, code: 'not_found', request_id: res.headers.get('x-request-id') });
    });

    it('answers malformed JSON with 400 invalid_json', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ success: false, code: 'invalid_json' });
    });

    it('answers a non-JSON body with 415', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ success: false, code: 'unsupported_media_type' });
    });

    it('answers an oversized body with 413', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'y'.repeat(5000) }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ success: false, code: 'payload_too_large' });
    });

    it('answers token API routes in the token shape with an OpenAI-style error object', async () => {
      const res = await fetch(`${plaza.url}/api/v1/nothing`);
      expect(res.status).toBe(404);
      const body: any = await res.json();
      expect(body).toMatchObject({ success: false, code: 'NOT_FOUND', error: { code: 'NOT_FOUND', type: 'not_found_error', param: null } });
    });

    it('never answers HTML or leaks a stack', async () => {
      const res = await fetch(`${plaza.url}/%E0%A4%A`);
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(text).not.toMatch(/<html|at .*\.ts:\d+/i);
    });
  });
});

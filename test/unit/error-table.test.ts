/** Pins the one table from error code to HTTP status and per-surface body shape. */
import { describe, expect, it } from 'vitest';

import { ERROR_TABLE, renderError, surfaceOf } from '../../src/http/index.ts';
import { AuthError, PlazaError, RateLimitError, ValidationError } from '../../src/kernel/index.ts';

describe('ERROR_TABLE', () => {
  it('maps each code to its status and token API code', () => {
    expect(
      Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, row]) => [code, [row.status, row.tokenCode]])),
    ).toEqual({
      bad_request: [400, 'BAD_REQUEST'],
      invalid_json: [400, 'BAD_REQUEST'],
      invalid_prompt: [400, 'BAD_REQUEST'],
      invalid_lead: [400, 'BAD_REQUEST'],
      unauthorized: [401, 'UNAUTHORIZED'],
      forbidden: [403, 'FORBIDDEN'],
      not_found: [404, 'NOT_FOUND'],
      method_not_allowed: [405, 'METHOD_NOT_ALLOWED'],
      conflict: [409, 'CONFLICT'],
      payload_too_large: [413, 'BAD_REQUEST'],
      unsupported_media_type: [415, 'BAD_REQUEST'],
      rate_limited: [429, 'RATE_LIMITED'],
      internal: [500, 'INTERNAL_ERROR'],
      upstream_failed: [502, 'INTERNAL_ERROR'],
      unavailable: [503, 'INTERNAL_ERROR'],
    });
  });
});

describe('renderError', () => {
  it('renders the website shape', () => {
    const out = renderError(new ValidationError('prompt is required', { code: 'invalid_prompt' }), 'website', 'req_1');
    expect(out).toEqual({
      status: 400,
      headers: {},
      body: { success: false, code: 'invalid_prompt', message: 'prompt is required', request_id: 'req_1' },
    });
  });

  it('renders the token shape with an OpenAI-style error object and param', () => {
    const out = renderError(
      new ValidationError('temperature must be a number', { param: 'temperature' }),
      'token',
      'req_2',
    );
    expect(out.body).toEqual({
      success: false,
      code: 'BAD_REQUEST',
      message: 'temperature must be a number',
      request_id: 'req_2',
      error: {
        message: 'temperature must be a number',
        type: 'invalid_request_error',
        code: 'BAD_REQUEST',
        param: 'temperature',
      },
    });
  });

  it('answers a body too large or of the wrong type with 400 on the token surface, 413/415 elsewhere', () => {
    for (const [code, status] of [
      ['payload_too_large', 413],
      ['unsupported_media_type', 415],
    ] as const) {
      const error = new PlazaError(code, 'no');
      expect(renderError(error, 'website', 'r').status).toBe(status);
      const token = renderError(error, 'token', 'r');
      expect(token.status).toBe(400);
      expect(token.body).toMatchObject({
        code: 'BAD_REQUEST',
        error: { type: 'invalid_request_error', code: 'BAD_REQUEST', param: null },
      });
    }
  });

  it('adds WWW-Authenticate to 401 and Retry-After to 429', () => {
    expect(renderError(new AuthError(), 'token', 'r').headers).toEqual({ 'www-authenticate': 'Bearer realm="plaza"' });
    expect(renderError(new RateLimitError('slow down', 2.2), 'website', 'r').headers).toEqual({ 'retry-after': '3' });
  });

  it('hides everything about unknown errors', () => {
    const out = renderError(
      new Error('connection string postgres://secret@db failed at /src/x.ts:1'),
      'website',
      'req_3',
    );
    expect(out.status).toBe(500);
    expect(JSON.stringify(out.body)).not.toMatch(/secret|x\.ts/);
    expect(out.body).toMatchObject({ success: false, code: 'internal', request_id: 'req_3' });
  });

  it('keeps the cause of wrapped errors', () => {
    const cause = new Error('jose said no');
    expect(new PlazaError('unauthorized', 'bad token', { cause }).cause).toBe(cause);
  });
});

describe('surfaceOf', () => {
  it.each([
    ['/api/v1/chat/completions', 'token'],
    ['/api/auth/guest-token', 'token'],
    ['/api/agents', 'token'],
    ['/api/agents/agt_1/revoke', 'token'],
    ['/api/leads', 'website'],
    ['/api/mcp/catalog', 'website'],
    ['/health', 'website'],
  ])('%s answers in the %s shape', (path, surface) => {
    expect(surfaceOf(path)).toBe(surface);
  });
});

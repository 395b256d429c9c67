/**
 * Pins the gateway's one table from a refusal to its HTTP status and JSON-RPC code (`/mcp`,
 * `/mcp/p/<provider>`, `/mcp/p/platform`), and what a refusal looks like on the wire.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import {
  bearerToken,
  GATEWAY_ERROR_TABLE,
  GatewayError,
  InsufficientScopeError,
  sendGatewayError,
  sendUnauthorized,
} from '../../gateway/index.ts';
import { AuthError } from '../../src/kernel/index.ts';

describe('GATEWAY_ERROR_TABLE', () => {
  it('maps each refusal to its status, JSON-RPC code and where it is answered', () => {
    expect(
      Object.fromEntries(
        Object.entries(GATEWAY_ERROR_TABLE).map(([code, row]) => [code, [row.status, row.rpcCode, row.answer]]),
      ),
    ).toEqual({
      unauthorized: [401, -32001, 'http'],
      insufficient_scope: [403, -32001, 'http'],
      storage_unavailable: [503, -32603, 'http'],
      shutting_down: [503, -32603, 'http'],
      body_too_large: [413, -32600, 'http'],
      body_cut: [400, -32600, 'http'],
      not_utf8: [400, -32700, 'http'],
      parse_error: [400, -32700, 'http'],
      invalid_request: [400, -32600, 'http'],
      invalid_params: [400, -32602, 'http'],
      invalid_call_params: [200, -32602, 'in-band'],
      method_not_allowed: [405, -32600, 'http'],
      sdk_method_not_allowed: [405, -32000, 'http'],
      unsupported_encoding: [415, -32600, 'http'],
      no_connector: [404, -32600, 'http'],
      session_gone: [404, -32600, 'http'],
      upstream_credential_refused: [403, -32600, 'http'],
      held_answers_full: [200, -32603, 'in-band'],
      call_refused: [200, -32600, 'in-band'],
      origin_refused: [403, -32000, 'http'],
      header_mismatch: [400, -32020, 'http'],
      missing_client_capability: [400, -32021, 'http'],
      unsupported_protocol_version: [400, -32022, 'http'],
      not_acceptable: [406, -32000, 'http'],
      too_many_streams: [429, -32000, 'http'],
    });
  });

  it('answers in-band exactly the rows whose status is 200', () => {
    for (const row of Object.values(GATEWAY_ERROR_TABLE)) expect(row.answer === 'in-band').toBe(row.status === 200);
  });

  it('asks for a retry on the 503s and closes the connection where the body was left unread', () => {
    const retried = Object.entries(GATEWAY_ERROR_TABLE)
      .filter(([, row]) => row.retryAfterS !== undefined)
      .map(([code, row]) => [code, row.retryAfterS]);
    expect(retried).toEqual([
      ['storage_unavailable', '2'],
      ['shutting_down', '2'],
      ['too_many_streams', '5'],
    ]);
    const closing = Object.entries(GATEWAY_ERROR_TABLE)
      .filter(([, row]) => row.closesConnection)
      .map(([code]) => code);
    expect(closing).toEqual(['body_too_large', 'unsupported_encoding']);
  });
});

describe('sendGatewayError', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function answer(error: GatewayError, headers?: Record<string, string>): Promise<Response> {
    server = createServer((_req: IncomingMessage, res: ServerResponse) => sendGatewayError(res, error, headers));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  }

  it('writes the row status, a JSON-RPC error under the id, and the row headers plus the caller’s', async () => {
    const res = await answer(new GatewayError('storage_unavailable', 'down', 7), { allow: 'POST' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'down' } });
  });

  it('answers under id null when the refusal is about no one request', async () => {
    const res = await answer(new GatewayError('sdk_method_not_allowed', 'no stream'));
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no stream' } });
  });
});

describe('sendUnauthorized', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function refuse(
    refusal: AuthError,
    resourceMetadata: string | undefined,
    init: RequestInit,
  ): Promise<Response> {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void sendUnauthorized(req, res, refusal, resourceMetadata);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, init);
  }

  const metadata = 'https://plaza.example/.well-known/oauth-protected-resource/mcp';
  const call = {
    method: 'POST',
    headers: { authorization: 'Bearer agt_x', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
  };

  it('answers a refused credential 401 (the unauthorized row) naming the Protected Resource Metadata', async () => {
    const res = await refuse(new AuthError('Invalid or revoked agent credential.'), metadata, call);
    expect(res.status).toBe(GATEWAY_ERROR_TABLE.unauthorized.status);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer realm="plaza", resource_metadata="${metadata}", error="invalid_token", error_description="Invalid or revoked agent credential."`,
    );
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32001, message: 'Invalid or revoked agent credential.' },
    });
  });

  it('answers a credential without the scope 403 insufficient_scope (its row) with the scope to ask for', async () => {
    const res = await refuse(new InsufficientScopeError('The token was not granted mcp.', 'mcp'), metadata, call);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer realm="plaza", resource_metadata="${metadata}", error="insufficient_scope", scope="mcp", error_description="The token was not granted mcp."`,
    );
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32001, message: 'The token was not granted mcp.' },
    });
  });

  it('gives a request without a credential a bare challenge', async () => {
    const res = await refuse(new AuthError('Send the agent credential.'), undefined, { method: 'GET' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plaza"');
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer\tabc  ', 'abc'],
    ['BEARER abc\t', 'abc'],
  ])('reads the token of %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc'])(
    'finds no token in %j',
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );
});

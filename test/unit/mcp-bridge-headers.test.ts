/**
 * Pins the MCP 2026-07-28 request headers the stdio bridge derives from a request's `_meta`
 * envelope, against a real HTTP server: a value no HTTP header can carry (a method outside
 * Latin-1, a line break in the version) does not fail the request in the bridge; it goes as the
 * client wrote it, for the server to answer.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { boundedFetch, withEnvelopeHeaders } from '../../src/cli/mcp-bridge-fetch.ts';

const META = 'io.modelcontextprotocol/protocolVersion';

describe('the bridge’s 2026-07-28 request headers', () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req
      .resume()
      .on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'),
      );
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends them with a request that carries the envelope', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'écho', _meta: { [META]: '2026-07-28' } },
    });
    const res = await boundedFetch(() => undefined)(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    await res.text();
    expect(seen.at(-1)).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from('écho').toString('base64')}?=`,
    });
  });

  it('passes on, as written, a request whose method or version no header can carry', async () => {
    const fetcher = boundedFetch(() => undefined);
    for (const [method, version] of [
      ['tools/调用', '2026-07-28'],
      ['tools/call\u0000', '2026-07-28'],
      ['tools/call', '2026-07-28\r\nX-Injected: 1'],
      ['tools/call', '版本'],
    ] as const) {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method,
        params: { name: 'echo', _meta: { [META]: version } },
      });
      expect(() => withEnvelopeHeaders({ method: 'POST', body })).not.toThrow();
      const before = seen.length;
      const res = await fetcher(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
      await res.text();
      expect(seen.length).toBe(before + 1);
      expect(seen.at(-1)!['x-injected']).toBeUndefined();
    }
  });
});

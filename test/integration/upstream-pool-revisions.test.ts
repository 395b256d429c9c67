/**
 * The pool's requests in the revision each upstream speaks, checked by the SDK v2 server's own
 * validation (its header/body cross-checks answer -32020 on any disagreement): stateless requests
 * to a 2026-07-28 server (Mcp-Name encoded as the spec says, the envelope winning over a stale one
 * in the caller's `_meta` or headers), answers passed back unchanged (`resultType`, an
 * `input_required` result, a JSON-RPC error under HTTP 404), and the fall back from initialize to
 * stateless for an upstream with no revisions recorded; sessions, in the newest shared revision,
 * for an SDK v1 server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createUpstreamPool } from '../../gateway/index.ts';
import { headerValue } from '../../gateway/upstream/header-value.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { type SdkV2Upstream, startSdkV2HeaderUpstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ONLY_2026 = ['2026-07-28'] as const;

describe('the upstream pool and the revision each upstream speaks', () => {
  let v2: SdkV2Upstream;
  let v1: SdkUpstream;
  let geo: SdkV2Upstream;

  beforeAll(async () => {
    [v2, v1, geo] = await Promise.all([
      startSdkV2Upstream({ legacy: 'reject', pages: [[{ name: 'forecast' }]] }),
      startSdkUpstream(),
      startSdkV2HeaderUpstream(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([v2?.close(), v1?.close(), geo?.close()]);
  });

  const last = (method: string) => v2.seen.filter((s) => s.method === method).at(-1)!;

  it.each([
    ['a plain name', 'forecast', 'forecast'],
    ['a name beyond ASCII', 'météo', `=?base64?${Buffer.from('météo').toString('base64')}?=`],
    ['a name with a space around it', ' padded', `=?base64?${Buffer.from(' padded').toString('base64')}?=`],
    [
      'a name that looks like the sentinel',
      '=?base64?eA==?=',
      `=?base64?${Buffer.from('=?base64?eA==?=').toString('base64')}?=`,
    ],
  ])(
    'calls a tool with %s stateless, and the server takes the headers as matching the body',
    async (_, name, header) => {
      const pool = createUpstreamPool({ timeoutMs: 10_000 });
      const response = await pool.request({
        url: v2.url,
        revisions: ONLY_2026,
        method: 'tools/call',
        params: { name, arguments: { n: 1 }, _meta: { platform: { call_id: 'call_1' } } },
        headers: { 'x-platform-call-id': 'call_1' },
      });
      expect(response.error).toBeUndefined();
      // Passed back as the upstream gave it, resultType included.
      expect(response.result).toMatchObject({
        content: [{ type: 'text', text: `${name} {"n":1}` }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'sdk-v2-upstream' } },
      });
      const seen = last('tools/call');
      expect(seen.status).toBe(200);
      expect(seen.headers['mcp-name']).toBe(header);
      expect(headerValue(name)).toBe(header);
      expect(seen.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' });
      expect(seen.meta).toEqual({
        platform: { call_id: 'call_1' },
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'plaza-gateway', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      });
      expect(pool.size()).toBe(0);
    },
  );

  it("puts its envelope over a stale one in the caller's _meta and headers, with the call's client capabilities", async () => {
    const pool = createUpstreamPool({ timeoutMs: 10_000, clientInfo: { name: 'plaza-test', version: '9' } });
    const response = await pool.request({
      url: v2.url,
      revisions: ['2026-07-28', '2025-11-25'],
      method: 'tools/call',
      params: {
        name: 'forecast',
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25', progressToken: 'p1' },
      },
      headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list', 'mcp-session-id': 'old' },
      clientCapabilities: { elicitation: { form: {} } },
    });
    expect(response.result).toMatchObject({ resultType: 'complete' });
    const seen = last('tools/call');
    expect(seen.headers['mcp-session-id']).toBeUndefined();
    expect(seen.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' });
    expect(seen.meta).toEqual({
      progressToken: 'p1',
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'plaza-test', version: '9' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    });
  });

  it('passes an input_required result back as it came, and a JSON-RPC error answered under HTTP 404 as the answer', async () => {
    const pool = createUpstreamPool({ timeoutMs: 10_000 });
    const asked = await pool.request({
      url: v2.url,
      revisions: ONLY_2026,
      method: 'tools/call',
      params: { name: 'ask', arguments: {} },
      headers: {},
    });
    expect(asked.result).toMatchObject({ resultType: 'input_required', requestState: 'ask-1' });
    const retried = await pool.request({
      url: v2.url,
      revisions: ONLY_2026,
      method: 'tools/call',
      params: { name: 'ask', arguments: {}, requestState: 'ask-1' },
      headers: {},
    });
    expect(retried.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'ask {}' }] });
    // 2026-07-28 has no ping: the server answers -32601 under HTTP 404.
    const ping = await pool.request({ url: v2.url, revisions: ONLY_2026, method: 'ping', headers: {} });
    expect(ping.error).toMatchObject({ code: -32601 });
    expect(last('ping').status).toBe(404);
  });

  it('falls back to stateless when an upstream with no revisions recorded refuses initialize, and stays there', async () => {
    const pool = createUpstreamPool({ timeoutMs: 10_000 });
    const initializes = () => v2.seen.filter((s) => s.method === 'initialize').length;
    const before = initializes();
    for (const n of [1, 2]) {
      const response = await pool.request({
        url: v2.url,
        method: 'tools/call',
        params: { name: 'forecast', arguments: { n } },
        headers: {},
      });
      expect(response.result).toMatchObject({ content: [{ type: 'text', text: `forecast {"n":${n}}` }] });
    }
    // One initialize, refused with -32022 (HTTP 400): the second call went stateless at once.
    expect(initializes()).toBe(before + 1);
    expect(v2.seen.filter((s) => s.method === 'initialize').at(-1)!.status).toBe(400);
    expect(pool.size()).toBe(0);
  });

  it('opens a session with an SDK v1 server in the newest revision both speak, and tells what it agreed', async () => {
    const pool = createUpstreamPool({ timeoutMs: 10_000 });
    const call = { url: v1.url, revisions: ['2025-11-25'], method: 'tools/call', headers: {} };
    const response = await pool.request({ ...call, params: { name: 'echo', arguments: { message: 'hi' } } });
    expect(response.result).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining('hi') }] });
    expect(pool.size()).toBe(1);
    const initialize = v1.seen.filter((s) => s.body?.method === 'initialize').at(-1)!;
    expect(initialize.body.params.protocolVersion).toBe('2025-11-25');
    const opened = await pool.initialized(call);
    expect(opened.protocolVersion).toBe('2025-11-25');
    expect(opened.result).toMatchObject({ capabilities: { tools: {} } });
    // Another set of client capabilities is another session (its initialize declared them).
    await pool.request({
      ...call,
      params: { name: 'echo', arguments: { message: 'again' } },
      clientCapabilities: { sampling: {} },
    });
    expect(pool.size()).toBe(2);
    expect(v1.seen.filter((s) => s.body?.method === 'initialize').at(-1)!.body.params.capabilities).toEqual({
      sampling: {},
    });
  });
  it("mirrors the arguments a tool's schema marks with x-mcp-header in Mcp-Param-* headers, as the server checks", async () => {
    const pool = createUpstreamPool({ timeoutMs: 10_000 });
    const listed = await pool.request({ url: geo.url, revisions: ONLY_2026, method: 'tools/list', headers: {} });
    const schema = (listed.result as { tools: { name: string; inputSchema: Record<string, unknown> }[] }).tools[0]!
      .inputSchema;
    expect(schema).toMatchObject({ properties: { region: { 'x-mcp-header': 'Region' } } });
    const call = {
      url: geo.url,
      revisions: ONLY_2026,
      method: 'tools/call',
      params: { name: 'geo', arguments: { region: 'Zürich', n: 2 } },
      headers: {},
    };
    // Without the schema the header is missing: the server's -32020 (under HTTP 400) is the answer.
    const refused = await pool.request(call);
    expect(refused.error).toMatchObject({ code: -32020, message: expect.stringContaining('Mcp-Param-Region') });
    expect(geo.seen.at(-1)!.status).toBe(400);
    const answered = await pool.request({ ...call, toolInputSchema: schema });
    expect(answered.result).toMatchObject({ content: [{ type: 'text', text: '{"region":"Zürich","n":2}' }] });
    expect(geo.seen.at(-1)!.headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
    // An argument left out has no header, and the server takes that too.
    const without = await pool.request({
      ...call,
      params: { name: 'geo', arguments: { n: 3 } },
      toolInputSchema: schema,
    });
    expect(without.error).toBeUndefined();
    expect(geo.seen.at(-1)!.headers['mcp-param-region']).toBeUndefined();
  });
});

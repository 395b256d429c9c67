/**
 * Pins the gateway's check of MCP 2026-07-28's standard request headers against the body
 * (gateway/mcp-headers.ts) and `resultType` on Plaza's own results (gateway/result-type.ts).
 */
import { describe, expect, it } from 'vitest';

import { completeResponse, headerMismatch } from '../../gateway/index.ts';
import { decodeHeaderValue } from '../../gateway/mcp-headers.ts';

const meta = (version: string) => ({ _meta: { 'io.modelcontextprotocol/protocolVersion': version } });
const call = (version = '2026-07-28', name = 'echo') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, ...meta(version) },
});
const standard = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

describe('headerMismatch', () => {
  it('passes a request whose headers mirror its body, and messages of earlier revisions whatever their headers', () => {
    expect(headerMismatch(standard, call())).toBeUndefined();
    expect(headerMismatch({ ...standard, 'mcp-name': ' echo\t' }, call())).toBeUndefined();
    expect(headerMismatch({ 'mcp-method': 'nonsense' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(
      undefined,
    );
    // A notification needs none of the headers; what it sends must still agree.
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: meta('2026-07-28') };
    expect(headerMismatch({}, note)).toBeUndefined();
    expect(headerMismatch({ 'mcp-method': 'ping' }, note)).toMatch(/Mcp-Method header names ping/);
  });

  it('names each disagreement and each missing header', () => {
    const cases: [Record<string, string>, unknown, RegExp][] = [
      [{ ...standard, 'mcp-protocol-version': '2025-11-25' }, call(), /names protocol version 2026-07-28 but/],
      [{ ...standard, 'mcp-method': 'tools/list' }, call(), /Mcp-Method header names tools\/list/],
      [{ ...standard, 'mcp-name': 'other' }, call(), /Mcp-Name header name different things/],
      [{ 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, call(), /MCP-Protocol-Version is absent/],
      [{ 'mcp-protocol-version': '2026-07-28', 'mcp-name': 'echo' }, call(), /Mcp-Method is absent/],
      [{ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }, call(), /Mcp-Name is absent/],
      [{ ...standard, 'mcp-name': '=?base64?not base64?=' }, call(), /invalid Base64 sentinel/],
      // A header/body version disagreement is one on any revision a body names.
      [{ 'mcp-protocol-version': '2026-07-28' }, call('2025-11-25'), /names protocol version 2025-11-25 but/],
    ];
    for (const [headers, message, why] of cases) expect(headerMismatch(headers, message), String(why)).toMatch(why);
  });

  it('compares a resource URI and decodes a Base64 sentinel before comparing', () => {
    const read = {
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/read',
      params: { uri: 'file:///ü.txt', ...meta('2026-07-28') },
    };
    const sentinel = `=?base64?${Buffer.from('file:///ü.txt').toString('base64')}?=`;
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/read' };
    expect(headerMismatch({ ...headers, 'mcp-name': sentinel }, read)).toBeUndefined();
    expect(headerMismatch({ ...headers, 'mcp-name': 'file:///other' }, read)).toMatch(/different resources/);
    expect(decodeHeaderValue('=?base64?YQ?=')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?/w==?=')).toBeUndefined();
    expect(decodeHeaderValue('plain')).toBe('plain');
  });
});

describe('completeResponse', () => {
  it('marks a result complete for 2026-07-28 and later, and leaves earlier revisions and errors as they were', () => {
    const result = { jsonrpc: '2.0' as const, id: 1, result: { content: [], isError: true } };
    expect(completeResponse(result, '2026-07-28').result).toEqual({
      content: [],
      isError: true,
      resultType: 'complete',
    });
    expect(completeResponse(result, '2025-11-25')).toBe(result);
    expect(completeResponse(result, undefined)).toBe(result);
    const error = { jsonrpc: '2.0' as const, id: 1, error: { code: -32600, message: 'no' } };
    expect(completeResponse(error, '2026-07-28')).toBe(error);
  });
});

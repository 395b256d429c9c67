/**
 * One request in a stateless revision (2026-07-28): the envelope in `params._meta` (protocol
 * version, Plaza's clientInfo, the caller's client capabilities) and the standard headers the
 * server checks against the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
 */
import { NAME_SOURCE } from '../mcp-headers.ts';
import { headerValue } from './header-value.ts';
import { paramHeaders } from './param-headers.ts';

export const ENVELOPE = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
} as const;

/** Who Plaza says it is to upstreams, unless the pool is told otherwise. */
export const PLAZA_CLIENT_INFO = Object.freeze({ name: 'plaza-gateway', version: '1' });

const NO_CAPABILITIES: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** What a stateless request is made of. */
export interface StatelessRequest {
  revision: string;
  method: string;
  params: unknown;
  /** The call's headers (identity, assertion, credential). */
  headers: Record<string, string>;
  clientInfo: { name: string; version: string };
  clientCapabilities: Record<string, unknown> | undefined;
  /** The called tool's input schema, for its `Mcp-Param-*` headers (see param-headers). */
  toolInputSchema?: Record<string, unknown> | undefined;
}

/**
 * The params and headers of a stateless request. The envelope's keys win over the same keys in
 * the caller's `_meta`: the version must be the header's, and the client Plaza speaks for is itself
 * (with the caller's capabilities). Everything else in `_meta` (the AGIN card, a progress token)
 * goes as it came.
 */
export function statelessRequest(request: StatelessRequest): {
  params: Record<string, unknown>;
  headers: Record<string, string>;
} {
  const given =
    typeof request.params === 'object' && request.params !== null && !Array.isArray(request.params)
      ? (request.params as Record<string, unknown>)
      : {};
  const meta = given['_meta'];
  const params: Record<string, unknown> = {
    ...given,
    _meta: {
      ...(typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? meta : {}),
      [ENVELOPE.protocolVersion]: request.revision,
      [ENVELOPE.clientInfo]: request.clientInfo,
      [ENVELOPE.clientCapabilities]: request.clientCapabilities ?? NO_CAPABILITIES,
    },
  };
  const headers: Record<string, string> = {
    ...request.headers,
    'mcp-protocol-version': request.revision,
    'mcp-method': request.method,
  };
  delete headers['mcp-session-id'];
  const field = Object.hasOwn(NAME_SOURCE, request.method) ? NAME_SOURCE[request.method]! : undefined;
  const name = field === undefined ? undefined : given[field];
  if (typeof name === 'string') headers['mcp-name'] = headerValue(name);
  else delete headers['mcp-name'];
  if (request.toolInputSchema !== undefined && request.method === 'tools/call')
    Object.assign(headers, paramHeaders(request.toolInputSchema, given['arguments']));
  return { params, headers };
}

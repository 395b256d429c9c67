import {
  ErrorCode,
  JSONRPCErrorResponseSchema,
  type JSONRPCMessage,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  LATEST_PROTOCOL_VERSION,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

import type { GuardedRequest, GuardedResponse } from '../guarded-request.ts';
import { createSseParser } from './sse.ts';

/** An answer the probe cannot use (HTTP status, content, JSON-RPC); never quotes the upstream body. */
export class ProbeProtocolError extends Error {
  /** The HTTP status, when that was the problem. */
  readonly status: number | undefined;
  /**
   * A 401 with a Bearer challenge (`WWW-Authenticate: Bearer …`), as MCP authorization has a
   * server ask for a caller's token; not a 401 of any other kind (Basic auth, a REST API).
   */
  readonly bearerChallenge: boolean;
  constructor(message: string, status?: number, bearerChallenge = false) {
    super(message);
    this.name = 'ProbeProtocolError';
    this.status = status;
    this.bearerChallenge = bearerChallenge;
  }
}

/** A client side of one streamable HTTP session, just enough to probe. */
export interface ProbeSession {
  /** Sends a request and resolves with its result, validated by `schema`. */
  request<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S): Promise<z.output<S>>;
  /** Sends a notification; the server must accept it (2xx). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Sets the negotiated version, sent as `mcp-protocol-version` from then on. */
  setProtocolVersion(version: string): void;
  /**
   * Speaks a stateless revision (2026-07-28 on) from now on: every request carries `envelope` in
   * `params._meta`, and the `mcp-protocol-version` and `mcp-method` headers; a result whose
   * `resultType` is present and not `complete` is refused (a probe asks nothing that needs input).
   */
  useStateless(version: string, envelope: Record<string, unknown>): void;
  readonly sessionId: string | undefined;
  /** Ends the server's session (DELETE), if it gave one; 405 counts as done. */
  terminate(): Promise<void>;
}

/**
 * The client half of MCP's streamable HTTP transport, as the SDK's StreamableHTTPClientTransport
 * speaks it for a short-lived client: JSON-RPC over POST, answered with JSON or an event stream,
 * the `mcp-session-id` from the server echoed back, `mcp-protocol-version` after initialize,
 * DELETE at the end. Not opened: the standalone GET stream (a probe waits for no server-initiated
 * message). Messages are validated with the SDK's own JSON-RPC schema; errors are the SDK's McpError.
 */
export function createProbeSession(url: string, send: GuardedRequest, signal: AbortSignal): ProbeSession {
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  /** The per-request `_meta` of a stateless revision; undefined while speaking a session revision. */
  let envelope: Record<string, unknown> | undefined;
  let nextId = 0;

  const headers = (extra: Record<string, string>) => {
    const all: Record<string, string> = { ...extra };
    if (sessionId !== undefined) all['mcp-session-id'] = sessionId;
    if (protocolVersion !== undefined) all['mcp-protocol-version'] = protocolVersion;
    return all;
  };
  // Redirects are not followed: the gateway calls the listed URL and follows none (identity
  // headers and the AGIN assertion are bound to it), so an endpoint that only answers after a
  // redirect would look healthy here while every call through Plaza failed.
  const post = <T>(
    message: JSONRPCMessage,
    read: (response: GuardedResponse) => Promise<T>,
    extra: Record<string, string> = {},
  ) =>
    send(
      url,
      {
        method: 'POST',
        headers: headers({
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...extra,
        }),
        body: JSON.stringify(message),
        signal,
        redirect: 'manual',
      },
      async (response) => {
        const given = response.header('mcp-session-id');
        if (given) sessionId = given;
        if (response.status >= 300 && response.status <= 399) throw redirectError(url, response);
        if (response.status < 200 || response.status > 299) {
          const bearer =
            response.status === 401 && /(?:^|,)\s*bearer(?:\s|,|$)/i.test(response.header('www-authenticate') ?? '');
          throw new ProbeProtocolError(`Error POSTing to endpoint (HTTP ${response.status}).`, response.status, bearer);
        }
        return read(response);
      },
    );

  // The SDK's client answers what a server asks mid-stream: ping with an empty result, anything
  // else (sampling, elicitation, roots: capabilities a probe does not declare) with "method not found".
  const answer = (message: JSONRPCMessage) => {
    if (!('method' in message) || !('id' in message)) return;
    const reply: JSONRPCMessage =
      message.method === 'ping'
        ? { jsonrpc: '2.0', id: message.id, result: {} }
        : { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } };
    post(reply, (response) => response.text()).catch(() => undefined);
  };

  return {
    async request<S extends z.ZodType>(
      method: string,
      params: Record<string, unknown>,
      schema: S,
    ): Promise<z.output<S>> {
      const id = nextId++;
      // A stateless revision names the method in a header (the server checks it against the body)
      // and carries the version and client capabilities in every request's _meta.
      const stateless: Record<string, string> = envelope !== undefined ? { 'mcp-method': method } : {};
      const sent =
        envelope !== undefined
          ? { ...params, _meta: { ...(params['_meta'] as Record<string, unknown> | undefined), ...envelope } }
          : params;
      const message = await post(
        { jsonrpc: '2.0', id, method, params: sent },
        async (response) => {
          const type = mediaType(response.header('content-type'));
          if (response.status === 202)
            throw new ProbeProtocolError('The endpoint accepted a request without answering it (HTTP 202).', 202);
          if (type === 'application/json') {
            const body = parseJson(await response.text());
            for (const raw of Array.isArray(body) ? body : [body]) {
              const received = parseMessage(raw);
              if (isAnswerTo(received, id)) return received;
              answer(received);
            }
            throw new ProbeProtocolError('The endpoint answered without a response to the request.');
          }
          if (type === 'text/event-stream') {
            const parser = createSseParser();
            for await (const chunk of response.chunks()) {
              for (const event of parser.push(chunk)) {
                if (event.event !== 'message' || event.data === '') continue;
                const received = parseMessage(parseJson(event.data));
                if (isAnswerTo(received, id)) return received;
                answer(received);
              }
            }
            throw new ProbeProtocolError('The event stream ended without a response to the request.');
          }
          throw new ProbeProtocolError(`Unexpected content type: ${type.slice(0, 100) || 'none'}.`);
        },
        stateless,
      );
      if ('error' in message) throw McpError.fromError(message.error.code, message.error.message, message.error.data);
      const raw = (message as { result: unknown }).result;
      const resultType =
        raw !== null && typeof raw === 'object' ? (raw as { resultType?: unknown }).resultType : undefined;
      // Absent reads as complete, as for the revisions before 2026-07-28: lenient, as the probe is.
      if (envelope !== undefined && resultType !== undefined && resultType !== 'complete') {
        throw new ProbeProtocolError(
          `The ${method} result is not complete (resultType ${JSON.stringify(String(resultType).slice(0, 40))}).`,
        );
      }
      const result = schema.safeParse(raw);
      if (!result.success)
        throw new ProbeProtocolError(`Invalid ${method} result: ${describeIssue(result.error.issues[0])}.`);
      return result.data as z.output<S>;
    },
    async notify(method, params) {
      // Read the (normally empty) body so the connection can serve the next request.
      await post(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, (response) =>
        response.text(),
      );
    },
    setProtocolVersion(version) {
      protocolVersion = version;
    },
    useStateless(version, meta) {
      protocolVersion = version;
      envelope = meta;
    },
    get sessionId() {
      return sessionId;
    },
    async terminate() {
      if (sessionId === undefined) return;
      await send(url, { method: 'DELETE', headers: headers({}), signal, redirect: 'manual' }, async (response) => {
        if ((response.status < 200 || response.status > 299) && response.status !== 405) {
          throw new ProbeProtocolError(`Failed to terminate session (HTTP ${response.status}).`, response.status);
        }
        await response.text();
        sessionId = undefined;
      });
    },
  };
}

/**
 * Why a redirect fails the probe, naming where it points (origin and path only: a query can carry
 * a signed token) so the provider can list that URL instead.
 */
function redirectError(url: string, response: GuardedResponse): ProbeProtocolError {
  const location = response.header('location');
  const target = location !== undefined && URL.canParse(location, url) ? new URL(location, url) : undefined;
  const where = target ? ` to ${`${target.origin}${target.pathname}`.slice(0, 200)}` : '';
  return new ProbeProtocolError(
    `The endpoint redirects (HTTP ${response.status})${where}; Plaza calls the listed URL and follows no redirects, so list the URL it redirects to.`,
    response.status,
  );
}

/** The protocol version the prober asks for. */
export const PROBE_PROTOCOL_VERSION = LATEST_PROTOCOL_VERSION;

type Answer = JSONRPCMessage & ({ result: unknown } | { error: { code: number; message: string; data?: unknown } });

/** The response to request `id`; an error without an id (the server could not read the request) counts too. */
function isAnswerTo(message: JSONRPCMessage, id: number): message is Answer {
  if ('result' in message) return message.id === id;
  return 'error' in message && (message.id === id || message.id === undefined);
}

// JSON.parse and zod messages can quote the upstream body; probe errors never do.
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProbeProtocolError('The endpoint sent invalid JSON.');
  }
}

/**
 * The SDK's JSONRPCMessageSchema, minus its union: the four message schemas are strict, so the
 * keys present pick the only one that can match, and a probe's many answers skip three failed
 * attempts (and their issue objects) each.
 */
function parseMessage(raw: unknown): JSONRPCMessage {
  const keys = raw !== null && typeof raw === 'object' ? raw : {};
  const schema =
    'method' in keys
      ? 'id' in keys
        ? JSONRPCRequestSchema
        : JSONRPCNotificationSchema
      : 'error' in keys
        ? JSONRPCErrorResponseSchema
        : JSONRPCResultResponseSchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ProbeProtocolError('The endpoint sent something that is not a JSON-RPC message.');
  return parsed.data;
}

function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  return issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unknown';
}

/** The media type without parameters, lower-case (`Application/JSON; charset=utf-8` → `application/json`). */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

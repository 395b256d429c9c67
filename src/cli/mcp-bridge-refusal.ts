import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { parseLossless } from './mcp-bridge-numbers.ts';

/**
 * A POST the gateway refused (HTTP 4xx or 5xx). The gateway answers most refusals in JSON-RPC (a
 * revoked agent's 401, a refused call's 400 with an `isError` result, a 404 for a session it no
 * longer knows, a 503 while its database is down): the SDK's transport threw those as
 * `Streamable HTTP error: Error POSTing to endpoint: <the body, escaped>`, and the client got that
 * text inside an error of the bridge's. The bridge's fetch throws this instead, and each request
 * of the POST is answered with the gateway's own answer.
 */

/** A JSON-RPC response as the gateway answers: under a request's id, or under null (it could not tell which). */
type GatewayAnswer = { jsonrpc: '2.0'; id: string | number | null } & (
  { result: unknown } | { error: { code: number; message: string; data?: unknown } }
);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isAnswer(value: unknown): value is GatewayAnswer {
  if (!isRecord(value) || value['jsonrpc'] !== '2.0' || 'method' in value) return false;
  const id = value['id'];
  if (id !== null && typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  const error = value['error'];
  if ('result' in value) return !('error' in value);
  return isRecord(error) && typeof error['code'] === 'number' && typeof error['message'] === 'string';
}

/** The JSON-RPC responses a refusal's body holds (none when it is not JSON-RPC), numbers as written. */
export function gatewayAnswers(body: string): GatewayAnswer[] {
  let parsed: unknown;
  try {
    parsed = parseLossless(body);
  } catch {
    return [];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).filter(isAnswer);
}

/**
 * What a refusal means, in a few words, for one whose body says nothing the client could read as
 * JSON-RPC (a proxy's page, a plain-text 503): the status and what to do.
 */
export function statusMeaning(status: number, retryAfter: string | null): string {
  const retry = retryAfter !== null && /^\d+$/.test(retryAfter) ? `retry in ${retryAfter} s` : 'retry in a moment';
  if (status === 401)
    return 'the gateway refused the agent credential (401): run `plaza agents login --token <agent token>` to store a valid one';
  if (status === 403) return 'the gateway, or a proxy in front of it, refused the request (403)';
  if (status === 404)
    return 'nothing answers at this gateway address (404): is the stored URL (or --url) the base URL of a Plaza?';
  if (status === 408 || status === 504)
    return `the gateway, or a proxy in front of it, timed out (${status}): ${retry}`;
  if (status === 413) return 'the message is larger than the gateway takes (413)';
  if (status === 429) return `the gateway, or a proxy in front of it, limits this agent's rate (429): ${retry}`;
  if (status === 502 || status === 503) return `the gateway is unavailable (${status}): ${retry}`;
  if (status >= 500) return `the gateway failed (${status}): ${retry}`;
  return `the gateway refused the request (${status})`;
}

/** A POST answered 4xx or 5xx: the gateway's JSON-RPC answers, when its body held any. */
export class GatewayRefusal extends Error {
  override readonly name = 'GatewayRefusal';
  /** The HTTP status of the refusal. */
  readonly status: number;
  /** The JSON-RPC responses its body held (none when it was not JSON-RPC). */
  readonly answers: GatewayAnswer[];
  /** Its Retry-After header, if any. */
  readonly retryAfter: string | null;

  constructor(status: number, answers: GatewayAnswer[], retryAfter: string | null) {
    const said = answers.find((a) => 'error' in a);
    const words = said && 'error' in said ? said.error.message : undefined;
    // What stderr shows (the transport reports a failed send to onerror); a 401 names the fix.
    super(
      status === 401
        ? `the gateway refused the agent credential (401${words ? `: ${words}` : ''}): run \`plaza agents login --token <agent token>\` to store a valid one`
        : words
          ? `HTTP ${status}: ${words}`
          : statusMeaning(status, retryAfter),
    );
    this.status = status;
    this.answers = answers;
    this.retryAfter = retryAfter;
  }

  /**
   * The answer to request `id`: the gateway's own, under that id or under null (a refusal of the
   * whole POST, which names no request); else the bridge's, saying what the status means.
   */
  answerFor(id: string | number): JSONRPCMessage {
    const own = this.answers.find((a) => a.id === id) ?? this.answers.find((a) => a.id === null && 'error' in a);
    if (own) return { ...own, id } as JSONRPCMessage;
    return { jsonrpc: '2.0', id, error: { code: -32603, message: statusMeaning(this.status, this.retryAfter) } };
  }
}

/** Reads a refusal's body (at most `maxBytes` of it) into a GatewayRefusal. */
export async function readRefusal(res: Response, maxBytes: number): Promise<GatewayRefusal> {
  let body = '';
  if (res.body) {
    const decoder = new TextDecoder();
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        // Too large to be an answer the bridge passes on: its status speaks for it.
        body = '';
        break;
      }
      body += decoder.decode(chunk, { stream: true });
    }
  }
  return new GatewayRefusal(res.status, gatewayAnswers(body), res.headers.get('retry-after'));
}

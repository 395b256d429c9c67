/**
 * How the session pool opens an upstream session: `initialize`, then `notifications/initialized`,
 * and what a refusal of either means. Apart from the pool, which decides when a session is opened.
 */
import { randomUUID } from 'node:crypto';

import { requestUpstream, UpstreamCallError } from '../upstream-client.ts';
import type { UpstreamHttp } from '../upstream-http.ts';
import { withDeadline } from './deadline.ts';
import { refusesRevision, supportedRevisions } from './error-answer.ts';
import { sessionHeaders, type SessionMessages } from './session-messages.ts';

/** The upstream refused `initialize` as an unsupported version: it may speak only a stateless revision. */
export class RevisionRefusedError extends UpstreamCallError {
  /** The revisions it named (a -32022's `data.supported`), if any. */
  readonly supported: string[];
  constructor(message: string, supported: string[]) {
    super(message);
    this.name = 'RevisionRefusedError';
    this.supported = supported;
  }
}

/** What initialize agreed. */
export interface OpenedSession {
  sessionId: string | null;
  protocolVersion: string;
  /** The upstream's initialize result (capabilities, serverInfo, instructions). */
  result: Record<string, unknown>;
}

/** What opening a session needs: the pool's options, and how it answers an upstream's request. */
export interface SessionOpenerDeps {
  http: UpstreamHttp;
  timeoutMs: number;
  maxBytes: number;
  clientInfo: { name: string; version: string };
  answer: SessionMessages['answer'];
}

/** Builds the session opener; see the file's comment. */
export function createSessionOpener(deps: SessionOpenerDeps) {
  const { http, timeoutMs, maxBytes, clientInfo, answer } = deps;

  async function open(
    url: string,
    headers: Record<string, string>,
    revision: string,
    capabilities: Record<string, unknown>,
  ): Promise<OpenedSession> {
    const { response, sessionId } = await withDeadline(timeoutMs, undefined, (signal) =>
      requestUpstream(http, {
        url,
        message: {
          jsonrpc: '2.0',
          id: randomUUID(),
          method: 'initialize',
          params: { protocolVersion: revision, capabilities, clientInfo },
        },
        headers,
        signal,
        // MCP allows only a ping before initialization ends; the version is not agreed yet.
        onRequest: (r, id) => answer(url, sessionHeaders(headers, id, revision), r),
        maxBytes,
        errorAnswers: true,
      }),
    );
    if (response.error) {
      const why = `the upstream refused initialize: ${response.error.message}`;
      if (refusesRevision(response)) throw new RevisionRefusedError(why, supportedRevisions(response));
      throw new UpstreamCallError(why);
    }
    const result = (response.result ?? {}) as Record<string, unknown>;
    const protocolVersion = String(result['protocolVersion'] ?? revision);
    const notifyHeaders: Record<string, string> = {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': protocolVersion,
    };
    if (sessionId) notifyHeaders['mcp-session-id'] = sessionId;
    const notified = await withDeadline(timeoutMs, undefined, (signal) =>
      http(url, {
        method: 'POST',
        headers: notifyHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        signal,
      }),
    ).catch((error: unknown) => {
      throw new UpstreamCallError('the upstream failed after initialize', { cause: error });
    });
    notified.discard();
    return { sessionId, protocolVersion, result };
  }

  return open;
}

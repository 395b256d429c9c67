import type { IncomingMessage, ServerResponse } from 'node:http';

import { AuthError, type Clock, newId } from '../src/kernel/index.ts';
import type { AgentAuthenticator, AgentIdentity, GatewayEndpoint } from './identity/agin-card.ts';
import { type AssertionKey, signAssertion } from './identity/assertion.ts';
import { authenticateRequest } from './identity/bearer.ts';
import { stampResult } from './identity/stamp.ts';
import { type JsonRpcId, type JsonRpcResponse, RECEIPT_UNRECORDED, toolErrorResult } from './internal/json-rpc.ts';
import { type CallContext, type receiptFor, type ReceiptSink, recordCall } from './receipt-sink.ts';
import { type GatewayPath, traceCall, traceUpstreamStart } from './telemetry.ts';
import { sendUnauthorized } from './unauthorized.ts';

/** What the authorize hook is asked about: who calls what, where. */
export interface AuthorizeInput {
  identity: AgentIdentity;
  provider: string;
  /**
   * The JSON-RPC method: `tools/call` for a call (it counts against quotas), `tools/list` for "may
   * this tool be listed to this agent" (rules only, nothing counted).
   */
  method: string;
  tool: string;
  /**
   * The tool's annotations where the gateway knows them (the platform's own tools, on
   * `/mcp/p/platform` and on `/mcp`); absent elsewhere today. Looked up only when called, so a
   * hook that does not need them costs no lookup.
   */
  annotations?: (() => Readonly<Record<string, unknown>> | undefined) | undefined;
}

/** The hook's answer: allowed, or refused with a code, the words the caller reads, and when to ask again. */
export type Authorization =
  { allowed: true } | { allowed: false; code: string; reason: string; retryAfterS?: number | undefined };

/**
 * Decides whether an authenticated agent may make a call (issue 35's policy fills it: src/policy). A
 * refusal is answered in-band (the call's `isError` result, `call_refused` in the gateway's error
 * table; a rate limit's with `_meta.retryAfterS`) and receipted "refused by Plaza: …" with its code
 * (`denied`, `rate_limited`) as the receipt's status. A hook that throws refuses nothing: the error
 * reaches the entry point as any other failure would.
 */
export type Authorize = (input: AuthorizeInput) => Authorization | Promise<Authorization>;

const ALLOWED: Authorization = { allowed: true };

/** The default hook: every authenticated agent may call every tool. */
export const allowEveryCall: Authorize = () => ALLOWED;

/** A call's outcome as its receipt records it. */
export type CallOutcome = Parameters<typeof receiptFor>[1];

/** Options of createCallPipeline. */
export interface CallPipelineOptions {
  agents: AgentAuthenticator;
  /** Default: allowEveryCall. */
  authorize?: Authorize | undefined;
  /** The key of the assertions calls carry upstream; absent for a pipeline whose calls never leave the process. */
  assertionKey?: (() => Promise<AssertionKey>) | undefined;
  /** `iss` of assertions: Plaza's public base URL. */
  issuer?: string | undefined;
  receipts: ReceiptSink;
  clock: Clock;
}

/**
 * The steps every gateway call takes, in order, whatever the entry point: authenticate →
 * authorize → open the call → sign and stamp → forward → record → stamp the result. An entry point
 * reads its request and relays its answer in its own way, and takes each step from here.
 */
export interface CallPipeline {
  readonly clock: Clock;
  /**
   * The agent behind `req`'s Bearer credential, sent to `endpoint` (`/mcp` or `/mcp/p/<provider>`,
   * for a credential's audience). Throws AuthError when refused; anything else means it could not
   * be checked.
   */
  authenticate(req: IncomingMessage, endpoint: GatewayEndpoint): Promise<AgentIdentity>;
  /**
   * The agent behind `req`, sent to `endpoint`, or undefined once `req` is answered: 401 with the
   * Bearer challenge naming the endpoint's Protected Resource Metadata (403 `insufficient_scope`
   * for a credential without a scope it needs; sendUnauthorized, the one place either is built)
   * for a refused credential; `unverifiable` answers one that could not be checked (its entry
   * point's 503), else the error is rethrown.
   */
  admit(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: GatewayEndpoint,
    unverifiable?: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  ): Promise<AgentIdentity | undefined>;
  /** Asks the authorize hook. */
  authorize(input: AuthorizeInput): Promise<Authorization>;
  /** The words of a refused call's answer and receipt. */
  refusal(authorization: Extract<Authorization, { allowed: false }>): string;
  /** Opens a call: its call id, its start, its span. */
  open(call: {
    identity: AgentIdentity;
    provider: string;
    tool: string;
    path: GatewayPath;
    upstreamSession?: string | undefined;
    secrets?: readonly string[] | undefined;
  }): CallContext;
  /** The call's signed assertion (`X-PLATFORM-AGIN-Assertion`) for the upstream at `audience`. */
  sign(call: CallContext, audience: string): Promise<string>;
  /** Marks the call as gone upstream (its upstream latency runs from here). */
  forwarding(call: CallContext): void;
  /** Records the call's receipt and ends its span; rethrows when the receipt could be stored nowhere. */
  record(call: CallContext, outcome: CallOutcome): Promise<void>;
  /** The result with the call's `_meta.platform`. */
  stamp(call: CallContext, result: unknown): Record<string, unknown>;
  /**
   * Records the call's receipt, then stamps its result; when the receipt can be stored nowhere, a
   * stamped `isError` result saying so instead: a result never leaves unreceipted.
   */
  settle(call: CallContext, outcome: CallOutcome, result: unknown): Promise<Record<string, unknown>>;
  /** A JSON-RPC answer to the call under the caller's id: an `isError` result with `text`, stamped. */
  failed(call: CallContext, callerId: JsonRpcId | undefined, text: string): JsonRpcResponse;
}

/** Builds the gateway's call pipeline. */
export function createCallPipeline(options: CallPipelineOptions): CallPipeline {
  const { clock, receipts } = options;
  const authorize = options.authorize ?? allowEveryCall;
  const assertionKey = options.assertionKey;
  if (assertionKey && options.issuer === undefined)
    throw new Error('createCallPipeline: an assertion key needs its issuer.');

  // The refusals this pipeline worded (text → code), so that a call recorded as refused with those
  // words gets its code as its receipt's status, and a rate limit's answer its retryAfterS.
  const worded = new Map<string, Extract<Authorization, { allowed: false }>>();
  const retryAfter = new WeakMap<CallContext, number>();
  const refusedBy = (text: string) => worded.get(text) ?? worded.get(text.replace(/; nothing was called$/, ''));
  const stamp = (call: CallContext, result: unknown) => {
    const stamped = stampResult(result, call.identity, call.callId);
    const retryAfterS = retryAfter.get(call);
    return retryAfterS === undefined
      ? stamped
      : { ...stamped, _meta: { ...(stamped['_meta'] as object), retryAfterS } };
  };
  const record = async (call: CallContext, outcome: CallOutcome) => {
    if ('refused' in outcome && outcome.code === undefined) {
      const refusal = refusedBy(outcome.refused);
      if (refusal) {
        outcome = { ...outcome, code: refusal.code };
        if (refusal.retryAfterS !== undefined) retryAfter.set(call, refusal.retryAfterS);
      }
    }
    await recordCall(receipts, call, outcome, clock.now());
  };

  return {
    clock,
    authenticate: (req, endpoint) => authenticateRequest(options.agents, req, endpoint),
    async admit(req, res, endpoint, unverifiable) {
      try {
        return await authenticateRequest(options.agents, req, endpoint);
      } catch (error) {
        if (!(error instanceof AuthError)) {
          // The credential could not be checked (the database is unreachable): refuse, clearly.
          if (!unverifiable) throw error;
          await unverifiable(req, res);
          return undefined;
        }
        await sendUnauthorized(req, res, error, options.agents.resourceMetadataUrl?.(endpoint));
        return undefined;
      }
    },
    async authorize(input) {
      return authorize(input);
    },
    refusal: (refused) => {
      const text = `${refused.reason} (${refused.code})${refused.retryAfterS === undefined ? '' : `; retry in ${refused.retryAfterS} s`}`;
      if (worded.size >= 1_024) worded.clear();
      worded.set(text, refused);
      return text;
    },
    open(call) {
      const context: CallContext = {
        callId: newId('call', clock.now()),
        identity: call.identity,
        provider: call.provider,
        tool: call.tool,
        startedAt: clock.now(),
      };
      if (call.upstreamSession !== undefined) context.upstreamSession = call.upstreamSession;
      if (call.secrets !== undefined) context.secrets = call.secrets;
      traceCall(context, call.path);
      return context;
    },
    async sign(call, audience) {
      if (!assertionKey) throw new Error('This call pipeline signs no assertions.');
      return signAssertion(await assertionKey(), {
        card: call.identity,
        callId: call.callId,
        audience,
        issuer: options.issuer!,
        nowSeconds: Math.floor(clock.now() / 1000),
      });
    },
    forwarding: (call) => traceUpstreamStart(call),
    record,
    stamp,
    async settle(call, outcome, result) {
      try {
        await record(call, outcome);
      } catch {
        return stamp(call, { content: [{ type: 'text', text: RECEIPT_UNRECORDED }], isError: true });
      }
      return stamp(call, result);
    },
    failed(call, callerId, text) {
      const response = toolErrorResult(callerId ?? null, text);
      return { ...response, result: stamp(call, response.result) };
    },
  };
}

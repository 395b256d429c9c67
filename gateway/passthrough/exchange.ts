/**
 * What the passthrough's steps share: the instance's dependencies, and one request's exchange
 * with its upstream as it goes from reading the request to relaying the answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { CallPipeline } from '../call-pipeline.ts';
import type { AnswerHold, HeldAnswers } from '../held-answers.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import type { CallInFlight, createCallsInFlight } from '../internal/calls-in-flight.ts';
import type { JsonRpcId } from '../internal/json-rpc.ts';
import type { TaskResultRequest } from '../internal/task-results.ts';
import type { CallContext, ReceiptSink } from '../receipt-sink.ts';
import type { SessionSealer } from '../session-sealer.ts';
import type { TaskDirectory } from '../task-directory.ts';
import type { UpstreamHttp } from '../upstream-http.ts';

/** A connector the gateway can reach. */
export interface Connector {
  provider: string;
  url: string;
  endpointId: string;
  /**
   * The MCP revisions the endpoint offers, newest first, as the probe recorded them; absent or
   * empty when unknown (the pool then speaks to it as before 2026-07-28, falling back).
   */
  protocolVersions?: readonly string[];
}

/** What every passthrough request of one instance uses, its options resolved. */
export interface PassthroughDeps {
  pipeline: CallPipeline;
  http: UpstreamHttp;
  sealer: SessionSealer;
  receipts: ReceiptSink;
  tasks: TaskDirectory | undefined;
  held: HeldAnswers;
  inFlight: ReturnType<typeof createCallsInFlight>;
  maxRequest: number;
  maxResponse: number;
  timeoutMs: number;
  writeTimeoutMs: number;
  onCall: ((endpointId: string) => void) | undefined;
  onToolsChanged: ((endpointId: string) => void) | undefined;
}

/** What a POST carries, read and checked (see readPost); a GET or DELETE carries none of it. */
export interface PostRequests {
  /** The body as it goes upstream; undefined for a GET or DELETE. */
  body: string | undefined;
  /** Whether the POST is a batch (its answers go back as one). */
  batch: boolean;
  /** The ids (upstream) of the requests a POST carries: its event stream ends once each is answered. */
  awaited: Set<JsonRpcId>;
  /** The POST's tools/call, opened (its receipt is due), and the caller's id for it. */
  call: CallContext | undefined;
  callRpcId: JsonRpcId | undefined;
  /** Calls of this session a notifications/cancelled in this POST is about. */
  cancelling: CallInFlight[];
  /** The tasks/result requests of this POST, by the id each went upstream under (see TaskResultRequest). */
  taskResults: Map<string, TaskResultRequest>;
  /** Why the authorize hook refused the call (nothing is sent upstream then). */
  refused: string | undefined;
  /** The MCP revision the POST's message claims in `params._meta` (2026-07-28 on); undefined before it. */
  revision: string | undefined;
}

/** One passthrough request on its way through: who asked what of which connector, and how it goes upstream. */
export interface Exchange extends PostRequests {
  req: IncomingMessage;
  res: ServerResponse;
  identity: AgentIdentity;
  provider: string;
  connector: Connector;
  method: string;
  /** The sealed session id the caller presented, when it did. */
  presented: string | undefined;
  upstreamSession: string | undefined;
  /** When this request arrived: a task result's receipt counts its latency from here. */
  arrivedAt: number;
  /** The caller's credential for the provider, kept out of receipts. */
  secrets: readonly string[] | undefined;
  /**
   * The ids this POST's requests went upstream under. An answer under any other id answers
   * nothing the caller asked here — a provider's guess at a caller's id, say, dressed as a
   * call's answer — and never reaches the caller.
   */
  asked: ReadonlySet<JsonRpcId>;
  /** The bytes of this request's answer Plaza holds, from the first read upstream until its client took them. */
  hold: AnswerHold;
  /** The headers the request goes upstream with. */
  headers: Record<string, string>;
}

/** What takes the place of an answer no caller may get (see relayEventStream, answerTaskResult). */
export const DROPPED = Symbol('dropped');
/** The receipt's words for a call the caller cancelled (notifications/cancelled). */
export const CALLER_CANCELLED = 'the caller cancelled the call';
/** What a client is told when the upstream no longer knows the session: start a new one (spec: 404). */
export const SESSION_GONE = 'Unknown or expired session; initialize a new one.';

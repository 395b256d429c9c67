/**
 * What each event of a relayed stream becomes: answers to the POST's requests stamped and
 * receipted, answers to nothing it asked dropped, a call's event ids replaced by Plaza's own.
 */
import { formatSseEvent, nestsDeeperThan, type SseEvent } from '../../src/kernel/index.ts';
import { createCallEventIds, looksLikeCallEventId } from '../internal/call-event-ids.ts';
import { isResponse, MAX_JSON_DEPTH, parseJson } from '../internal/json-rpc.ts';
import { resumePoint } from '../internal/stream-resume.ts';
import { DROPPED, type Exchange, type PassthroughDeps } from './exchange.ts';
import { answerTask, stampOrFail } from './request-answers.ts';
import type { SseWriter } from './sse-writer.ts';
import type { UpstreamControl } from './upstream-control.ts';

/**
 * The JSON-RPC id a tools/call (or a tasks/result) goes upstream under: its call id (`newId('call')`),
 * the one its receipt is kept under, unique whatever id the caller chose. An answer carrying one
 * on a stream that is not its request's own — a resumed stream replaying it — is known for what it is.
 */
const CALL_RPC_ID = /^call_[0-9a-z]{26}$/;

/** The events of one relayed stream, and what they told so far. */
export interface EventRelay {
  /** Relays `events` to the writer (see the file's comment). */
  emit(events: SseEvent[]): Promise<void>;
  /** The call's answer came. */
  readonly answered: boolean;
  /** The upstream's last event id, and its last `retry`: where and when a resume starts. */
  readonly lastEventId: string | undefined;
  readonly retry: string | undefined;
}

/** `resumed`: a GET resuming a POST's stream (answers to that POST's requests, other than calls, may pass). */
export function createEventRelay(
  deps: PassthroughDeps,
  ex: Exchange,
  control: UpstreamControl,
  writer: SseWriter,
  resumed: boolean,
): EventRelay {
  const { call, callRpcId, awaited } = ex;
  let answered = false;
  let lastEventId: string | undefined;
  let retry: string | undefined;
  /** One message of an event: stamped and receipted when it answers a request of this POST, else as it is, or DROPPED. */
  const relayed = async (message: unknown): Promise<unknown> => {
    // An error for no request (the provider could not read one) is passed on as it came.
    if (!isResponse(message) || message.id === null) return message;
    if (awaited.delete(message.id)) {
      if (call && message.id === call.callId) {
        answered = true;
        control.answered();
        return stampOrFail(deps, ex, message);
      }
      return answerTask(deps, ex, message);
    }
    // An answer to nothing this stream's POST is waiting for: a second answer, one to a cancelled
    // request, or one under an id the provider made up (a caller's id guessed, passed off as a
    // call's answer). A call's answer replayed on a resumed stream after its receipt was written
    // (its caller had gone) never reaches a caller unreceipted either; other answers replayed on
    // a resumed stream pass.
    return resumed && !(typeof message.id === 'string' && CALL_RPC_ID.test(message.id)) ? message : DROPPED;
  };
  const callEventId =
    call && callRpcId !== undefined
      ? createCallEventIds(
          deps.sealer.sign,
          { provider: call.provider, agentId: call.identity.agentId, upstreamSession: call.upstreamSession },
          call.callId,
          callRpcId,
        )
      : undefined;
  const emit = async (events: SseEvent[]) => {
    for (const event of events) {
      if (event.id !== undefined) {
        lastEventId = resumePoint(event.id);
        // On a call's stream the client gets Plaza's ids (see createCallEventIds). Elsewhere an id
        // in their form is a provider's imitation of one, which a client must not resume from.
        if (callEventId && event.id !== '') event.id = callEventId();
        else if (looksLikeCallEventId(event.id)) delete event.id;
      }
      if (event.retry !== undefined) retry = event.retry;
      if (event.data?.includes('"notifications/tools/list_changed"')) deps.onToolsChanged?.(ex.connector.endpointId);
      // Every event is looked at: an answer may be none this stream should carry (see relayed),
      // and no text test can tell (a key may be written "\u0072esult").
      if (event.data !== undefined) {
        let message: unknown;
        try {
          message = parseJson(event.data);
        } catch {
          // Not JSON: pass through untouched; the client decides.
        }
        // An event may hold a batch (protocol 2025-03-26): each of its messages is looked at.
        const out = Array.isArray(message)
          ? (await Promise.all(message.map(relayed))).filter((m) => m !== DROPPED)
          : await relayed(message);
        if (out === DROPPED || (Array.isArray(out) && out.length === 0 && (message as unknown[]).length > 0)) {
          // Its event id still moves the caller's resume point past it.
          if (event.id !== undefined) writer.add(formatSseEvent({ id: event.id }));
          continue;
        }
        if (Array.isArray(out)) {
          // Written again only when something in it changed; then without what nests too deep
          // to be written (a provider's junk beside the answers, which pass as for one message).
          if (out.length !== (message as unknown[]).length || out.some((m, i) => m !== (message as unknown[])[i]))
            event.data = JSON.stringify(out.filter((m) => !nestsDeeperThan(m, MAX_JSON_DEPTH)));
        } else if (out !== message) event.data = JSON.stringify(out);
      }
      writer.add(formatSseEvent(event));
    }
    writer.schedule();
  };
  return {
    emit,
    get answered() {
      return answered;
    },
    get lastEventId() {
      return lastEventId;
    },
    get retry() {
      return retry;
    },
  };
}

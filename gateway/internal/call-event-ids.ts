import type { JsonRpcId } from './json-rpc.ts';

/** Longest caller's id (as JSON) an event id names: ids are the caller's to choose, event ids go on every event. */
const MAX_CALLER_ID_JSON = 256;
/** `<call id>.<n>.<the caller's id as JSON, base64url>`; a call id is `newId('call')`. */
const CALL_EVENT_ID = /^(call_[0-9a-z]{26})\.(\d{1,9})\.([A-Za-z0-9_-]*)$/;

/** What an event id of a call's stream names: the call, and the caller's id for it (null when it was too long to name). */
export interface CallEventId {
  callId: string;
  callerId: JsonRpcId;
}

/**
 * The event ids Plaza gives the events it relays on a call's POST stream, in place of the
 * provider's (which Plaza keeps to resume the stream upstream itself). Each names the call and the
 * caller's id, so a client that resumes the stream with `Last-Event-ID` after its connection broke
 * — which ended the call — is answered by whichever instance it reaches, without the provider.
 */
export function createCallEventIds(callId: string, callerId: JsonRpcId): () => string {
  const json = JSON.stringify(callerId);
  const caller = json.length <= MAX_CALLER_ID_JSON ? Buffer.from(json).toString('base64url') : '';
  let n = 0;
  return () => `${callId}.${++n}.${caller}`;
}

/** The call an event id of {@link createCallEventIds} names, or undefined for any other id. */
export function readCallEventId(id: string): CallEventId | undefined {
  const match = CALL_EVENT_ID.exec(id);
  if (!match) return undefined;
  let callerId: unknown = null;
  try {
    if (match[3]) callerId = JSON.parse(Buffer.from(match[3], 'base64url').toString('utf8'));
  } catch {
    callerId = null;
  }
  // A request id is a string or an integer (the gateway refused any other before the call went upstream).
  const valid = typeof callerId === 'string' || (typeof callerId === 'number' && Number.isSafeInteger(callerId));
  return { callId: match[1]!, callerId: valid ? (callerId as JsonRpcId) : null };
}

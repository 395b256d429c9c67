import { timingSafeEqual } from 'node:crypto';

import type { JsonRpcId } from './json-rpc.ts';

/** Longest caller's id (as JSON) an event id names: ids are the caller's to choose, event ids go on every event. */
const MAX_CALLER_ID_JSON = 256;
/** `<call id>.<n>.<the caller's id as JSON, base64url>.<tag>`; a call id is `newId('call')`. */
const CALL_EVENT_ID = /^(call_[0-9a-z]{26})\.(\d{1,9})\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{22})$/;
/** Any id in that form, tag or not: a provider's imitation of one is never relayed. */
const CALL_EVENT_ID_FORM = /^call_[0-9a-z]{26}\./;

/** What an event id of a call's stream names: the call, and the caller's id for it (null when it was too long to name). */
export interface CallEventId {
  callId: string;
  callerId: JsonRpcId;
}

/** Whose a call's stream is: only a GET of the same agent, connector and upstream session may resume it. */
export interface CallStreamOwner {
  provider: string;
  agentId: string;
  /** Undefined for a connector without sessions. */
  upstreamSession: string | undefined;
}

/** A MAC under a key every instance shares (SessionSealer's `sign`). */
export type Sign = (text: string) => string;

function tagOf(sign: Sign, callId: string, caller: string, owner: CallStreamOwner): string {
  return sign(
    JSON.stringify(['call-event-id', callId, caller, owner.provider, owner.agentId, owner.upstreamSession ?? '']),
  );
}

/**
 * The event ids Plaza gives the events it relays on a call's POST stream, in place of the
 * provider's (which Plaza keeps to resume the stream upstream itself). Each names the call and the
 * caller's id, so a client that resumes the stream with `Last-Event-ID` after its connection broke
 * — which ended the call — is answered by whichever instance it reaches, without the provider. Each
 * carries a tag binding it to the stream's owner: another agent, connector or session cannot
 * present it as its own (see readCallEventId).
 */
export function createCallEventIds(
  sign: Sign,
  owner: CallStreamOwner,
  callId: string,
  callerId: JsonRpcId,
): () => string {
  const json = JSON.stringify(callerId);
  const caller = json.length <= MAX_CALLER_ID_JSON ? Buffer.from(json).toString('base64url') : '';
  const tag = tagOf(sign, callId, caller, owner);
  let n = 0;
  return () => `${callId}.${++n}.${caller}.${tag}`;
}

/** Whether an id is in the form of createCallEventIds' (whoever made it). */
export function looksLikeCallEventId(id: string): boolean {
  return CALL_EVENT_ID_FORM.test(id);
}

/**
 * The call an event id of {@link createCallEventIds} names when it was made for `owner`'s stream,
 * or undefined for any other id (another owner's, a forgery, a provider's).
 */
export function readCallEventId(id: string, sign: Sign, owner: CallStreamOwner): CallEventId | undefined {
  const match = CALL_EVENT_ID.exec(id);
  if (!match) return undefined;
  const expected = Buffer.from(tagOf(sign, match[1]!, match[3]!, owner));
  const presented = Buffer.from(match[4]!);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
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

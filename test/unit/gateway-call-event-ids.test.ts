/**
 * Pins the event ids the passthrough gives a call's POST stream (gateway/internal/call-event-ids.ts):
 * each names the call and the caller's id, so a client resuming the stream is answered by Plaza;
 * each is bound to the stream's agent, connector and upstream session, so no other GET may present
 * it as its own; no other id is taken for one.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { createSessionSealer } from '../../gateway/index.ts';
import { createCallEventIds, looksLikeCallEventId, readCallEventId } from '../../gateway/internal/call-event-ids.ts';

const CALL = 'call_01jz6a4k3m5n7p9q1r3s5t7v9w';
const { sign } = createSessionSealer(randomBytes(32));
const OWNER = { provider: 'acme', agentId: 'agin_a', upstreamSession: 'upstream-1' };

describe('createCallEventIds', () => {
  it.each([7, 'req-1', 'a.b\nc "quoted"', 0])(
    "names the call and the caller's id %j, a new id per event",
    (callerId) => {
      const next = createCallEventIds(sign, OWNER, CALL, callerId);
      const [first, second] = [next(), next()];
      expect(first).not.toBe(second);
      expect(first).not.toMatch(/[\r\n\0]/);
      expect(readCallEventId(first, sign, OWNER)).toEqual({ callId: CALL, callerId });
      expect(readCallEventId(second, sign, OWNER)).toEqual({ callId: CALL, callerId });
    },
  );

  it("leaves out a caller's id too long to carry on every event (read back as null)", () => {
    const id = createCallEventIds(sign, OWNER, CALL, 'x'.repeat(1_000))();
    expect(id.length).toBeLessThan(90);
    expect(readCallEventId(id, sign, OWNER)).toEqual({ callId: CALL, callerId: null });
  });
});

describe('readCallEventId', () => {
  const id = createCallEventIds(sign, OWNER, CALL, 7)();

  it.each([
    ['another agent', { ...OWNER, agentId: 'agin_b' }],
    ['another connector', { ...OWNER, provider: 'other' }],
    ['another session', { ...OWNER, upstreamSession: 'upstream-2' }],
    ['no session', { ...OWNER, upstreamSession: undefined }],
  ])("takes an id of a call's stream for none when presented by %s", (_name, owner) => {
    expect(looksLikeCallEventId(id)).toBe(true);
    expect(readCallEventId(id, sign, owner)).toBeUndefined();
  });

  it("takes an id made under another key, or with its caller's id changed, for none", () => {
    expect(readCallEventId(id, createSessionSealer(randomBytes(32)).sign, OWNER)).toBeUndefined();
    const [callId, n, , tag] = id.split('.');
    expect(
      readCallEventId([callId, n, Buffer.from('8').toString('base64url'), tag].join('.'), sign, OWNER),
    ).toBeUndefined();
  });

  it.each([
    ["an upstream's event id", 'c1d2e3f4-5678_1764200000000_abc'],
    ['a call id alone', CALL],
    ['a call id of the wrong length', 'call_01jz6a4k3m5n7p9q1r3s5t7v9.1.Nw'],
    ['an id without its tag', `${CALL}.1.Nw`],
    ['an empty id', ''],
  ])('takes %s for none of its ids', (_name, other) => {
    expect(readCallEventId(other, sign, OWNER)).toBeUndefined();
  });

  it.each([
    ['not JSON', '{nope'],
    ['a fraction', '1.5'],
    ['an object', '{"a":1}'],
  ])("reads a caller's id that is %s as null", (_name, json) => {
    // A signer that signs everything alike, so only the caller's id is odd.
    const alike = () => 'a'.repeat(22);
    expect(readCallEventId(`${CALL}.1.${Buffer.from(json).toString('base64url')}.${alike()}`, alike, OWNER)).toEqual({
      callId: CALL,
      callerId: null,
    });
  });
});

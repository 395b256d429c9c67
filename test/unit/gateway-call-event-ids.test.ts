/**
 * Pins the event ids the passthrough gives a call's POST stream (gateway/internal/call-event-ids.ts):
 * each names the call and the caller's id, so a client resuming the stream is answered by Plaza;
 * no other id is taken for one.
 */
import { describe, expect, it } from 'vitest';

import { createCallEventIds, readCallEventId } from '../../gateway/internal/call-event-ids.ts';

const CALL = 'call_01jz6a4k3m5n7p9q1r3s5t7v9w';

describe('createCallEventIds', () => {
  it.each([7, 'req-1', 'a.b\nc "quoted"', 0])('names the call and the caller\'s id %j, a new id per event', (callerId) => {
    const next = createCallEventIds(CALL, callerId);
    const [first, second] = [next(), next()];
    expect(first).not.toBe(second);
    expect(first).not.toMatch(/[\r\n\0]/);
    expect(readCallEventId(first)).toEqual({ callId: CALL, callerId });
    expect(readCallEventId(second)).toEqual({ callId: CALL, callerId });
  });

  it('leaves out a caller\'s id too long to carry on every event (read back as null)', () => {
    const id = createCallEventIds(CALL, 'x'.repeat(1_000))();
    expect(id.length).toBeLessThan(60);
    expect(readCallEventId(id)).toEqual({ callId: CALL, callerId: null });
  });
});

describe('readCallEventId', () => {
  it.each([
    ['an upstream\'s event id', 'c1d2e3f4-5678_1764200000000_abc'],
    ['a call id alone', CALL],
    ['a call id of the wrong length', 'call_01jz6a4k3m5n7p9q1r3s5t7v9.1.Nw'],
    ['an empty id', ''],
  ])('takes %s for none of its ids', (_name, id) => {
    expect(readCallEventId(id)).toBeUndefined();
  });

  it.each([
    ['not JSON', Buffer.from('{nope').toString('base64url')],
    ['a fraction', Buffer.from('1.5').toString('base64url')],
    ['an object', Buffer.from('{"a":1}').toString('base64url')],
  ])('reads a caller\'s id that is %s as null', (_name, encoded) => {
    expect(readCallEventId(`${CALL}.1.${encoded}`)).toEqual({ callId: CALL, callerId: null });
  });
});

/**
 * The gateway's count of answer bytes held for clients that have not read them: per agent and in
 * all, a figure past a limit refused (nothing changes), new requests refused once a limit is held,
 * and a released answer counted no more.
 */
import { describe, expect, it } from 'vitest';

import { createHeldAnswers } from '../../gateway/index.ts';

describe('createHeldAnswers', () => {
  it('refuses a figure that would take an agent past its limit, and counts nothing of it', () => {
    const held = createHeldAnswers({ perAgent: 100, total: 250 });
    const one = held.open('a');
    expect(one.set(60)).toBe(true);
    const two = held.open('a');
    expect(two.set(50)).toBe(false);
    expect(two.set(40)).toBe(true);
    expect([held.held('a'), held.held()]).toEqual([100, 100]);
    expect(held.refusal('a')).toMatch(/holds 100 bytes of this agent's answers/);
    expect(held.refusal('b')).toBeUndefined();
    one.release();
    one.release();
    expect([held.held('a'), held.held()]).toEqual([40, 40]);
    expect(held.refusal('a')).toBeUndefined();
  });

  it('refuses every agent once the instance holds its limit', () => {
    const held = createHeldAnswers({ perAgent: 100, total: 150 });
    expect(held.open('a').set(100)).toBe(true);
    const b = held.open('b');
    expect(b.set(60)).toBe(false);
    expect(b.set(50)).toBe(true);
    expect(held.refusal('c')).toMatch(/as many unread answers as it may \(150 bytes/);
    b.set(10);
    expect(held.held()).toBe(110);
    expect(held.refusal('c')).toBeUndefined();
  });

  it('counts nothing for an answer set after its release, and rejects bad limits', () => {
    const held = createHeldAnswers({ perAgent: 10, total: 10 });
    const hold = held.open('a');
    hold.release();
    expect(hold.set(5)).toBe(false);
    expect(held.held()).toBe(0);
    expect(() => createHeldAnswers({ perAgent: 0, total: 10 })).toThrow(/perAgent/);
  });
});

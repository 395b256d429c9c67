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

describe('a burst of answers larger than the limit', () => {
  it('lets go of the answers least far along to make room for the one furthest along', () => {
    const held = createHeldAnswers({ perAgent: 100, total: 100 });
    const [a, b, c] = [held.open('a'), held.open('a'), held.open('a')];
    expect(a.set(30) && b.set(30) && c.set(20)).toBe(true);
    // a grows by 30, 10 past the limit: c, the least far along, makes the room.
    expect(a.set(60)).toBe(true);
    expect(c.set(25)).toBe(false);
    expect([held.held('a'), held.held()]).toEqual([90, 90]);
    // The one furthest along is never let go for one behind it.
    expect(b.set(50)).toBe(false);
    expect(a.keep()).toBe(true);
    expect(b.set(40)).toBe(true);
  });

  it('never lets go of an answer read whole, nor makes room that would not suffice', () => {
    const held = createHeldAnswers({ perAgent: 100, total: 100 });
    const whole = held.open('a');
    expect(whole.set(10)).toBe(true);
    expect(whole.keep()).toBe(true);
    const behind = held.open('b');
    expect(behind.set(20)).toBe(true);
    const ahead = held.open('c');
    expect(ahead.set(60)).toBe(true);
    // 15 past the limit: `behind` (20) would make room, the answer read whole may not be touched.
    expect(ahead.set(85)).toBe(true);
    expect(behind.set(21)).toBe(false);
    expect(held.held()).toBe(95);
    // 30 past it: nothing being read is behind, so nothing is let go and the growth is refused.
    expect(ahead.set(120)).toBe(false);
    expect(held.held()).toBe(95);
    // Kept past the limit when it must be.
    ahead.keep(130);
    expect(held.held()).toBe(140);
  });
});

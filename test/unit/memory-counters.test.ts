/**
 * The in-process fixed-window counters behind every rate limit and token budget without Redis:
 * counts as rate-limiter-flexible's memory store did (a window opens with a key's first points
 * and lasts its length), and windows that ended are swept out rather than kept forever.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { MemoryCounters } from '../../src/rate-limit/index.ts';

describe('MemoryCounters', () => {
  afterEach(() => vi.useRealTimers());

  it('counts within a window, gives points back, and starts again when the window ends', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const counters = new MemoryCounters({ points: 3, durationSeconds: 60 });
    expect(counters.add('a', 1)).toEqual({ consumedPoints: 1, remainingPoints: 2, msBeforeNext: 60_000 });
    vi.advanceTimersByTime(10_000);
    expect(counters.penalty('a', 3)).toEqual({ consumedPoints: 4, remainingPoints: 0, msBeforeNext: 50_000 });
    expect(counters.reward('a', 2)).toEqual({ consumedPoints: 2, remainingPoints: 1, msBeforeNext: 50_000 });
    expect(counters.add('b', 1).consumedPoints).toBe(1);
    vi.advanceTimersByTime(50_000);
    expect(counters.add('a', 1)).toEqual({ consumedPoints: 1, remainingPoints: 2, msBeforeNext: 60_000 });
  });

  it('sweeps out the windows of keys not seen again', () => {
    vi.useFakeTimers({ now: 5_000_000 });
    const counters = new MemoryCounters({ points: 10, durationSeconds: 1 });
    for (let i = 0; i < 1000; i++) counters.add(`client-${i}`, 1);
    expect(counters.size).toBe(1000);
    vi.advanceTimersByTime(1_001);
    counters.add('later', 1);
    expect(counters.size).toBe(1);
  });

  it('keeps a one-day window whole across sweeps', () => {
    vi.useFakeTimers({ now: 9_000_000 });
    const counters = new MemoryCounters({ points: 100, durationSeconds: 86_400 });
    counters.add('guest', 40);
    for (let minute = 1; minute <= 10; minute++) {
      vi.advanceTimersByTime(60_000);
      counters.add('other', 1);
    }
    expect(counters.add('guest', 1)).toEqual({
      consumedPoints: 41,
      remainingPoints: 59,
      msBeforeNext: 86_400_000 - 600_000,
    });
  });
});

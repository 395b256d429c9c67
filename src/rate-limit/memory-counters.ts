/** A counter's state after a change, in the terms of rate-limiter-flexible's RateLimiterRes. */
export interface CounterState {
  /** Points counted in the current window, this change included. */
  consumedPoints: number;
  /** Points left before the limit (0 once reached or passed). */
  remainingPoints: number;
  /** Milliseconds until the window ends and the count starts again. */
  msBeforeNext: number;
}

interface Window {
  value: number;
  expiresAt: number;
}

/** How often, at most, expired windows are swept out (and at least once per window length). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Fixed-window counters in this process, one per key: a window starts with the first points
 * counted for its key and lasts `durationSeconds`. The same counts as rate-limiter-flexible's
 * RateLimiterMemory, which the limits used before, without its per-call promise, result objects
 * and timer per key: a chat completion counts in six of them (two request windows, two token
 * budgets reserved and settled), which cost ~11 µs of its CPU. Expired windows are swept lazily,
 * at most once a minute, so a key that is never seen again does not stay.
 */
export class MemoryCounters {
  readonly points: number;
  readonly #durationMs: number;
  readonly #windows = new Map<string, Window>();
  #sweepAt = 0;

  constructor(options: { points: number; durationSeconds: number }) {
    this.points = options.points;
    this.#durationMs = options.durationSeconds * 1000;
  }

  /** Adds `points` (negative to give back) to the key's current window, starting one if there is none. */
  add(key: string, points: number, now = Date.now()): CounterState {
    if (now >= this.#sweepAt) this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.expiresAt <= now) {
      window = { value: 0, expiresAt: now + this.#durationMs };
      this.#windows.set(key, window);
    }
    window.value += points;
    return {
      consumedPoints: window.value,
      remainingPoints: Math.max(0, this.points - window.value),
      msBeforeNext: window.expiresAt - now,
    };
  }

  /** Counts `points` (rate-limiter-flexible's name, for a store used either way). */
  penalty(key: string, points: number): CounterState {
    return this.add(key, points);
  }

  /** Gives `points` back. */
  reward(key: string, points: number): CounterState {
    return this.add(key, -points);
  }

  /** Keys with a window open (for tests). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number): void {
    this.#sweepAt = now + Math.min(SWEEP_EVERY_MS, this.#durationMs);
    for (const [key, window] of this.#windows) if (window.expiresAt <= now) this.#windows.delete(key);
  }
}

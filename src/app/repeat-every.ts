/** Work run now and then every so often, one run at a time (see repeatEvery). */
export interface Repeated {
  /** Runs the work now, unless a run is under way or it was stopped. */
  runNow(): void;
  /** No more runs; resolves once a run under way has ended, so nothing is written after it. */
  stop(): Promise<void>;
}

/**
 * Runs `work` now and every `intervalMs` (an unref'd timer), never two runs at once: a turn that
 * finds a run under way is skipped. `work` reports its own failures; it must not reject.
 */
export function repeatEvery(intervalMs: number, work: () => Promise<void>): Repeated {
  let stopped = false;
  let inFlight: Promise<void> | undefined;
  const runNow = () => {
    if (stopped || inFlight) return;
    inFlight = work().finally(() => (inFlight = undefined));
  };
  runNow();
  const timer = setInterval(runNow, intervalMs);
  timer.unref();
  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}

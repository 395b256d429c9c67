import type { Clock } from '../src/kernel/index.ts';
import type { ProbeLog, ProbeStore } from './probe-store.ts';

/** Collects demand (catalog hits, gateway calls) and writes it in small batches. */
export interface DemandRecorder {
  /** Notes that an endpoint was wanted; cheap, never throws, written within `flushMs`. */
  recordDemand(endpointId: string, weight?: number): void;
  /** Writes what is pending now. */
  flush(): Promise<void>;
  /** Flushes and stops. */
  close(): Promise<void>;
}

/** Options of createDemandRecorder. */
export interface DemandRecorderOptions {
  store: Pick<ProbeStore, 'addDemand'>;
  clock: Clock;
  log: ProbeLog;
  /** Delay before pending demand is written (default 1 000 ms). */
  flushMs?: number;
  /** An endpoint in demand is probed again within this delay (default 60 000 ms). */
  soonestMs?: number;
}

/**
 * Demand feeds the scheduler: wanted endpoints get a higher demand score and their next probe
 * pulled forward. Writes are batched per `flushMs` so a busy catalog costs one UPDATE a second.
 */
export function createDemandRecorder(options: DemandRecorderOptions): DemandRecorder {
  const flushMs = options.flushMs ?? 1_000;
  const soonestMs = options.soonestMs ?? 60_000;
  let pending = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await options.store.addDemand(batch, options.clock.now() + soonestMs);
    } catch (error) {
      options.log.warn({ err: error, endpoints: batch.size }, 'could not record demand');
    }
  }

  return {
    recordDemand(endpointId, weight = 1) {
      if (closed || !(weight > 0)) return;
      pending.set(endpointId, (pending.get(endpointId) ?? 0) + weight);
      if (!timer) {
        // eslint-disable-next-line @typescript-eslint/no-floating-promises -- flush catches and logs the store's failures
        timer = setTimeout(() => void flush(), flushMs);
        timer.unref();
      }
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}

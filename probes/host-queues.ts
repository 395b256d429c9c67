import PQueue from 'p-queue';

/** Concurrency bounds for outbound probes. */
export interface ConcurrencyLimits {
  /** Probes in flight at once, all hosts together. */
  global: number;
  /** Probes in flight at once against one host. */
  perHost: number;
}

/** Runs tasks with a global bound and a per-host bound. */
export interface HostQueues {
  run<T>(host: string, task: () => Promise<T>): Promise<T>;
  /** Resolves when nothing is queued or running. */
  onIdle(): Promise<void>;
}

/**
 * A per-host p-queue in front of a global one: a task first waits for a slot on its host, then for
 * a global slot, so one slow host cannot take every global slot. Host queues are dropped when idle.
 */
export function createHostQueues(limits: ConcurrencyLimits): HostQueues {
  if (!(limits.global >= 1) || !(limits.perHost >= 1)) throw new TypeError('concurrency limits must be at least 1');
  const global = new PQueue({ concurrency: limits.global });
  const hosts = new Map<string, PQueue>();
  return {
    async run<T>(host: string, task: () => Promise<T>): Promise<T> {
      let queue = hosts.get(host);
      if (!queue) {
        const created = new PQueue({ concurrency: limits.perHost });
        created.addEventListener('idle', () => {
          if (hosts.get(host) === created) hosts.delete(host);
        });
        hosts.set(host, (queue = created));
      }
      return queue.add(() => global.add(task)) as Promise<T>;
    },
    async onIdle() {
      await Promise.all([...hosts.values()].map((q) => q.onIdle()));
      await global.onIdle();
    },
  };
}

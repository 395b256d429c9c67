import type { Config } from '../../config/index.ts';
import {
  createDiscovery,
  createProber,
  type Discovery,
  type HostBudget,
  type Prober,
  type ProbeStore,
  type SourceWorker,
} from '../../probes/index.ts';
import type { Database } from '../db/index.ts';
import { type Clock, systemClock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createMailer, type Mailer } from '../mail/index.ts';
import { createDiscoveryStore, createProbeStore } from '../marketplace/index.ts';
import { createSourcesWorker } from '../sources/index.ts';

/** Background work of a running server; `stop` waits for what is in flight. */
export interface BackgroundWork {
  prober: Prober | undefined;
  discovery: Discovery | undefined;
  sourceWorker: SourceWorker | undefined;
  mailer: Mailer | undefined;
  stop(): Promise<void>;
}

/** How often the loops look for due work (a cheap indexed query each time). */
const PROBE_TICK_MS = 2_000;
const DISCOVERY_TICK_MS = 15_000;
// The first looks come soon after start (a fresh instance catches up), discovery a little later
// so a first full registry pull does not compete with start-up.
const FIRST_PROBE_TICK_MS = 500;
const FIRST_DISCOVERY_TICK_MS = 2_000;
// Package sources and e-mail: enqueueing also kicks delivery at once; these loops catch up
// retries, re-probes and work left by another instance.
const SOURCES_TICK_MS = 2_000;
const MAIL_TICK_MS = 5_000;

/**
 * Starts the probe scheduler and registry discovery loops (unless PLAZA_BACKGROUND is off). Both
 * only look for due work: what is due and who does it is decided in the database (leases), so any
 * number of instances can run them. Logs loudly when private targets are allowed. `probeStore`:
 * the marketplace's, so what the probe loop finds reaches this instance's tool search at once.
 * `hostBudget`: the marketplace's per-host probe bound, so the loop's probes and the marketplace's
 * own (new listings, tools/list_changed) count in one budget.
 */
export function startBackgroundWork(deps: {
  db: Database;
  config: Config;
  log: Logger;
  clock?: Clock;
  probeStore?: ProbeStore;
  hostBudget?: HostBudget | undefined;
}): BackgroundWork {
  const { db, config, log } = deps;
  const clock = deps.clock ?? systemClock;
  const settings = config.marketplace;
  if (settings.allowPrivateTargets) {
    log.warn(
      'PLAZA_ALLOW_PRIVATE_TARGETS is on: probes may reach loopback and private addresses. Development and tests only, never in production.',
    );
  }
  if (!config.background)
    return {
      prober: undefined,
      discovery: undefined,
      sourceWorker: undefined,
      mailer: undefined,
      stop: async () => undefined,
    };

  const prober = createProber({
    store: deps.probeStore ?? createProbeStore(db.prisma),
    clock,
    log,
    baseIntervalS: settings.probeBaseIntervalS,
    allowPrivateTargets: settings.allowPrivateTargets,
    ...(deps.hostBudget ? { hostBudget: deps.hostBudget } : {}),
  });
  const stopping = new AbortController();
  const discovery = settings.registryUrl
    ? createDiscovery({
        store: createDiscoveryStore(db.prisma),
        clock,
        log,
        registryUrl: settings.registryUrl,
        allowPrivateTargets: settings.allowPrivateTargets,
        signal: stopping.signal,
      })
    : undefined;

  const mailer = createMailer({ prisma: db.prisma, clock, log, smtpUrl: config.mail.smtpUrl, from: config.mail.from });
  const sourceWorker = createSourcesWorker({ prisma: db.prisma, clock, log, config, mailer });

  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<unknown>>();
  const loop = (name: string, tickMs: number, firstTickMs: number, work: () => Promise<unknown>) => {
    const run = () => {
      timers.delete(timer);
      if (stopped) return;
      const done = work()
        .catch((error: unknown) => log.error({ err: error, loop: name }, 'background work failed'))
        .finally(() => {
          inFlight.delete(done);
          if (!stopped) schedule();
        });
      inFlight.add(done);
    };
    let timer: NodeJS.Timeout;
    let first = true;
    const schedule = () => {
      timer = setTimeout(run, first ? firstTickMs : tickMs);
      first = false;
      timer.unref();
      timers.add(timer);
    };
    schedule();
  };
  loop('probes', PROBE_TICK_MS, FIRST_PROBE_TICK_MS, () => prober.runDue());
  loop('sources', SOURCES_TICK_MS, FIRST_PROBE_TICK_MS, () => sourceWorker.runDue());
  if (mailer.mode === 'smtp') loop('mail', MAIL_TICK_MS, FIRST_PROBE_TICK_MS, () => mailer.deliverDue());
  if (discovery) loop('discovery', DISCOVERY_TICK_MS, FIRST_DISCOVERY_TICK_MS, () => discovery.pullIfDue());
  log.info(
    { base_interval_s: settings.probeBaseIntervalS, registry: settings.registryUrl ?? 'off' },
    'probe and discovery loops started',
  );

  return {
    prober,
    discovery,
    sourceWorker,
    mailer,
    async stop() {
      stopped = true;
      stopping.abort();
      for (const timer of timers) clearTimeout(timer);
      await Promise.allSettled([prober.close(), sourceWorker.close(), ...inFlight]);
      await mailer.close();
    },
  };
}

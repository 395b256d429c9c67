/**
 * Every target the benchmarks are held to, in one place: which result file (bench/results/<bench>.json)
 * holds the figure, how to read it from that result, how it compares and in which unit. The summary
 * table (bench/summary.ts) is computed from these; nothing in it is typed by hand.
 */

/** A benchmark's saved result: the object it returned plus `name`, `date`, `machine`. */
export type BenchResult = Record<string, unknown>;

/** One figure read from a result. A target yields one per variant (backend, upstream, route). */
export interface Figure {
  /** Which variant this is, e.g. `postgres` or `mini upstream, PGlite receipts`. */
  variant?: string;
  /** The figure itself; `undefined` when the result does not carry it. */
  value: number | boolean | undefined;
  /** The raw numbers behind the value (both sides of a ratio, the other path). */
  detail?: string;
  /** When and where this figure was measured, if not its result file's (rows kept across runs). */
  date?: string;
  machine?: string;
}

/** A target: `value compare limit`, e.g. p99 <= 5 ms. */
export interface Target {
  /** The benchmark (and result file) that measures it. */
  bench: string;
  /** What is measured. */
  name: string;
  compare: '<=' | '<' | '>=' | '==';
  limit: number | boolean;
  /** Unit of the value and the limit ('' for a ratio). */
  unit: string;
  figures(result: BenchResult): Figure[];
}

/** The value at `path` in `obj`, if there is one. */
export function at(obj: unknown, ...path: string[]): unknown {
  let cur = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The number at `path`, if it is one. */
export function num(obj: unknown, ...path: string[]): number | undefined {
  const v = at(obj, ...path);
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The `rows` of a result that has one row per backend (tool-search, probe-round, soak). */
function rows(result: BenchResult): Record<string, unknown>[] {
  const list = result['rows'];
  return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
}

/** The soak's rows; its first results (PGlite only) were saved flat, without `rows`. */
function soakRows(result: BenchResult): Record<string, unknown>[] {
  const list = rows(result);
  return list.length > 0 || num(result, 'rss_growth_pct') === undefined ? list : [{ backend: 'pglite', ...result }];
}

function perBackend(
  read: (row: Record<string, unknown>) => Omit<Figure, 'variant' | 'date'>,
  list = rows,
): (result: BenchResult) => Figure[] {
  return (result) =>
    list(result).map((row) => ({
      variant: String(row['backend'] ?? '?'),
      ...read(row),
      ...(typeof row['kept_from'] === 'string'
        ? { date: row['kept_from'], machine: typeof row['machine'] === 'string' ? row['machine'] : undefined }
        : {}),
    }));
}

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);

/** Gateway labels as the table shows them. */
const GATEWAY_LABELS: Record<string, string> = {
  pglite: 'sync receipts on PGlite',
  'pglite-async': 'async receipts on PGlite',
  postgres: 'sync receipts on PostgreSQL',
  'postgres-async': 'async receipts on PostgreSQL',
  memory: 'receipts counted in memory',
  'reference_same-work-postgres': 'the same-work reference, receipt rows on PostgreSQL',
  'reference_same-work-pglite': 'the same-work reference, receipt rows on PGlite',
  'reference_bare-postgres': 'the bare reference, receipt rows on PostgreSQL',
};
/** Gateways whose receipts are committed before the answer. */
const syncReceipts = (g: string) => g === 'pglite' || g === 'postgres';
/** The latency target names no durability: async receipts on a real database, and the gateway alone. */
const latencyGateways = (g: string) => !syncReceipts(g);

/**
 * Gateway figures per upstream and receipt store; the passthrough (`/mcp/p/<provider>`) and the
 * aggregate (`/mcp`) are both held to the target, so the row's value is the worse of the two.
 */
function gatewayFigures(
  field: string,
  worse: 'max' | 'min',
  which: (gateway: string) => boolean,
): (result: BenchResult) => Figure[] {
  return (result) => {
    const gateways = (Array.isArray(result['gateways']) ? (result['gateways'] as string[]) : []).filter(which);
    const upstreams = Object.keys(result).filter((k) => at(result, k, 'direct') !== undefined);
    return upstreams.flatMap((upstream) =>
      gateways.map((g) => {
        const pass = num(result, upstream, `passthrough_${g}`, field);
        const agg = num(result, upstream, `aggregate_${g}`, field);
        const values = [pass, agg].filter((v): v is number => v !== undefined);
        return {
          variant: `${upstream} upstream, ${GATEWAY_LABELS[g] ?? g}`,
          value: values.length ? Math[worse](...values) : undefined,
          detail: `passthrough ${pass ?? '–'} / aggregate ${agg ?? '–'}`,
        };
      }),
    );
  };
}

/** The backends whose Plaza gateway is held to the same-work reference and the peers, with their reference. */
const SAME_WORK: Record<string, { reference: string; label: string }> = {
  postgres: { reference: 'same-work-postgres', label: 'PostgreSQL' },
  pglite: { reference: 'same-work-pglite', label: 'PGlite' },
};

/** A figure of Plaza's two endpoints (`/mcp/p/…` passthrough, `/mcp` aggregate) on `gateway`. */
function endpoints(result: BenchResult, upstream: string, gateway: string, field: string) {
  return {
    pass: num(result, upstream, `passthrough_${gateway}`, field),
    agg: num(result, upstream, `aggregate_${gateway}`, field),
  };
}

/** The upstreams a gateway result measured (the keys holding a `direct` row). */
function gatewayUpstreams(result: BenchResult): string[] {
  return Object.keys(result).filter((k) => at(result, k, 'direct') !== undefined);
}

/** The peers' figure `field` on `upstream`, by peer. */
function peerFigures(result: BenchResult, upstream: string, field: string): Record<string, number> {
  const row = (at(result, upstream) as Record<string, unknown> | undefined) ?? {};
  return Object.fromEntries(
    Object.keys(row)
      .filter((k) => k.startsWith('peer_') && num(row, k, field) !== undefined)
      .map((k) => [k.slice('peer_'.length), num(row, k, field)!]),
  );
}

const CPU32 = 'c32_gateway_cpu_us_per_call';
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b <= 0 ? undefined : Number((a / b).toFixed(3));
const worse = (...values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === values.length ? Math.max(...known) : undefined;
};

/**
 * Plaza's CPU per call at c=32 on both endpoints over a yardstick on the same upstream, per
 * upstream and backend: the row's value is the worse endpoint's ratio.
 */
function gatewayCpuAgainst(
  yardstick: (result: BenchResult, upstream: string, backend: string) => { cpu?: number; what: string },
): (result: BenchResult) => Figure[] {
  return (result) =>
    gatewayUpstreams(result).flatMap((upstream) =>
      Object.entries(SAME_WORK)
        .filter(([backend]) => at(result, upstream, `passthrough_${backend}`) !== undefined)
        .map(([backend, { label }]) => {
          const { pass, agg } = endpoints(result, upstream, backend, CPU32);
          const { cpu, what } = yardstick(result, upstream, backend);
          const ratios = endpoints(result, upstream, backend, 'throughput_ratio');
          return {
            variant: `${upstream} upstream, ${label}`,
            value: worse(ratio(pass, cpu), ratio(agg, cpu)),
            detail: `/mcp/p/… ${pass ?? '–'} µs, /mcp ${agg ?? '–'} µs per call vs ${what}; ÷ direct at c=32 ${ratios.pass ?? '–'} / ${ratios.agg ?? '–'}`,
          };
        }),
    );
}

const sameWorkYardstick = (result: BenchResult, upstream: string, backend: string) => {
  const reference = SAME_WORK[backend]!.reference;
  const cpu = num(result, upstream, `reference_${reference}`, CPU32);
  return {
    cpu,
    what: `the same-work reference ${cpu ?? '–'} µs (÷ direct ${num(result, upstream, `reference_${reference}`, 'throughput_ratio') ?? '–'})`,
  };
};

const cheapestPeerYardstick = (result: BenchResult, upstream: string) => {
  const peers = peerFigures(result, upstream, CPU32);
  const names = Object.keys(peers);
  const cpu = names.length ? Math.min(...Object.values(peers)) : undefined;
  return { cpu, what: `peers ${names.map((n) => `${n} ${peers[n]} µs`).join(', ') || '–'}` };
};

/** Plaza's RSS under c=32 (its process, both endpoints' phases) over mcp-hub's, on `backend`. */
function gatewayRssAgainstHub(backend: string): (result: BenchResult) => Figure[] {
  return (result) =>
    gatewayUpstreams(result)
      .filter((upstream) => at(result, upstream, `passthrough_${backend}`) !== undefined)
      .map((upstream) => {
        const { pass, agg } = endpoints(result, upstream, backend, 'c32_rss_mb');
        const hub = num(result, upstream, 'peer_mcp-hub', 'c32_rss_mb');
        const plaza = worse(pass, agg);
        return {
          variant: `${upstream} upstream, ${SAME_WORK[backend]!.label}`,
          value: ratio(plaza, hub),
          detail: `Plaza ${plaza ?? '–'} MB vs mcp-hub ${hub ?? '–'} MB`,
        };
      });
}

/** Plaza chat's CPU per completion at c=32 over a yardstick's, from the chat result. */
function chatCpuAgainst(which: 'essentials' | 'peers'): (result: BenchResult) => Figure[] {
  return (r) => {
    const plaza = num(r, 'cpu_us_per_completion_c32', 'proxied', 'plaza');
    const yardsticks =
      which === 'essentials'
        ? { essentials: num(r, 'reference_essentials_cpu_us_per_completion_c32', 'reference') }
        : Object.fromEntries(
            Object.keys(r)
              .filter((k) => k.startsWith('peer_') && k.endsWith('_cpu_us_per_completion_c32'))
              .map((k) => [k.slice(5, -'_cpu_us_per_completion_c32'.length), num(r, k, 'reference')]),
          );
    const known = Object.values(yardsticks).filter((v): v is number => v !== undefined);
    const cheapest = known.length ? Math.min(...known) : undefined;
    return [
      {
        value: ratio(plaza, cheapest),
        detail: `Plaza ${plaza ?? '–'} µs per completion vs ${
          Object.entries(yardsticks)
            .map(([k, v]) => `${k} ${v ?? '–'} µs`)
            .join(', ') || 'none'
        }; ÷ direct at c=32 ${num(r, 'throughput_ratio_c32') ?? '–'}`,
      },
    ];
  };
}

const WEBSITE_ROUTES = ['/health', '/api/products', '/api/scenarios', '/api/plans', '/api/manifesto'];

/** The targets, in the order of the summary table. */
export const TARGETS: Target[] = [
  {
    bench: 'startup',
    name: '`npm start` to first 200 on /health',
    compare: '<=',
    limit: 5,
    unit: 's',
    figures: (r) => [
      {
        variant: 'fresh data folder',
        value: seconds(num(r, 'fresh_folder_ms')),
        detail: `median of ${num(r, 'runs') ?? '?'}`,
      },
      {
        variant: 'existing data folder',
        value: seconds(num(r, 'existing_folder_ms')),
        detail: `median of ${num(r, 'runs') ?? '?'}`,
      },
    ],
  },
  {
    bench: 'health-throughput',
    name: '/health throughput vs bare Express, c=32',
    compare: '>=',
    limit: 0.8,
    unit: '',
    figures: (r) => [
      { value: num(r, 'ratio'), detail: `${num(r, 'plaza_health_rps')} vs ${num(r, 'baseline_express_rps')} req/s` },
    ],
  },
  {
    bench: 'website',
    name: 'GET throughput vs bare Express, c=32, median of alternating rounds',
    compare: '>=',
    limit: 0.8,
    unit: '',
    figures: (r) =>
      WEBSITE_ROUTES.map((route) => ({
        variant: route,
        value: num(r, 'routes', route, 'ratio'),
        detail: `${num(r, 'routes', route, 'rps')} req/s; rounds ${num(r, 'routes', route, 'ratio_min')}–${num(r, 'routes', route, 'ratio_max')}`,
      })),
  },
  {
    bench: 'website',
    name: 'intent classification p99, in process',
    compare: '<=',
    limit: 5,
    unit: 'ms',
    figures: (r) => [
      {
        value: num(r, 'classify_p99_ms'),
        detail: `p50 ${num(r, 'classify_p50_ms')} ms over ${num(r, 'classifications')} prompts`,
      },
    ],
  },
  {
    bench: 'gateway',
    name: 'added latency p50, c=1',
    compare: '<=',
    limit: 1,
    unit: 'ms',
    figures: gatewayFigures('added_p50_ms', 'max', latencyGateways),
  },
  {
    bench: 'gateway',
    name: 'added latency p99, c=1',
    compare: '<=',
    limit: 5,
    unit: 'ms',
    figures: gatewayFigures('added_p99_ms', 'max', latencyGateways),
  },
  {
    bench: 'gateway',
    name: 'CPU per call at c=32, over the in-house reference doing the same work (bearer check, identity stamp and assertion, receipt committed), worse of /mcp/p/… and /mcp',
    compare: '<=',
    limit: 1.5,
    unit: '×',
    figures: gatewayCpuAgainst(sameWorkYardstick),
  },
  {
    bench: 'gateway',
    name: 'CPU per call at c=32, over the cheapest npm peer (below every peer), worse of /mcp/p/… and /mcp',
    compare: '<',
    limit: 1,
    unit: '×',
    figures: gatewayCpuAgainst(cheapestPeerYardstick),
  },
  {
    bench: 'gateway',
    name: 'RSS under c=32 load over mcp-hub’s, PostgreSQL',
    compare: '<=',
    limit: 1,
    unit: '×',
    figures: gatewayRssAgainstHub('postgres'),
  },
  {
    bench: 'gateway',
    name: 'RSS under c=32 load over mcp-hub’s, PGlite',
    compare: '<=',
    limit: 1.5,
    unit: '×',
    figures: gatewayRssAgainstHub('pglite'),
  },
  {
    bench: 'gateway',
    name: 'receipts == calls',
    compare: '==',
    limit: true,
    unit: '',
    figures: (r) =>
      Object.keys((at(r, 'receipts') as object | undefined) ?? {}).map((g) => {
        const equal = at(r, 'receipts', g, 'equal');
        return {
          variant: GATEWAY_LABELS[g] ?? g,
          value: typeof equal === 'boolean' ? equal : undefined,
          detail: `${num(r, 'receipts', g, 'receipts')} receipts / ${num(r, 'receipts', g, 'calls')} calls${num(r, 'receipts', g, 'record_failures') === undefined ? '' : `, ${num(r, 'receipts', g, 'record_failures')} record failures`}`,
        };
      }),
  },
  {
    bench: 'chat-proxy',
    name: 'added time to first chunk p50, c=1',
    compare: '<=',
    limit: 1,
    unit: 'ms',
    figures: (r) => [
      {
        value: num(r, 'added_first_chunk_p50_ms'),
        detail: `${num(r, 'first_chunk_p50_proxied_ms')} vs ${num(r, 'first_chunk_p50_direct_ms')} ms direct`,
      },
    ],
  },
  {
    bench: 'chat-proxy',
    name: 'added time to first chunk p99, c=1',
    compare: '<=',
    limit: 5,
    unit: 'ms',
    figures: (r) => [{ value: num(r, 'added_first_chunk_p99_ms'), detail: `over ${num(r, 'samples_c1')} samples` }],
  },
  {
    bench: 'chat-proxy',
    name: 'CPU per streamed completion at c=32, over the in-house essentials reference',
    compare: '<=',
    limit: 1.5,
    unit: '×',
    figures: chatCpuAgainst('essentials'),
  },
  {
    bench: 'chat-proxy',
    name: 'CPU per streamed completion at c=32, over the cheapest npm peer (below every peer)',
    compare: '<',
    limit: 1,
    unit: '×',
    figures: chatCpuAgainst('peers'),
  },
  {
    bench: 'mcp-bridge',
    name: '`plaza mcp connect`: one 16 MiB message from the gateway to stdout, time vs a fetch + JSON.parse relay',
    compare: '<=',
    limit: 2,
    unit: '',
    figures: (r) =>
      rows(r)
        .filter((row) => row['mib'] === 16 && typeof row['ratio'] === 'number')
        .map((row) => ({
          variant: String(row['path']),
          value: num(row, 'ratio'),
          detail: `${num(row, 'bridge_ms')} vs ${num(row, 'baseline_ms')} ms, ${num(row, 'bridge_mib_per_s')} MiB/s; load ${num(r, 'load_start')} → ${num(r, 'load_end')}`,
        })),
  },
  {
    bench: 'tool-search',
    name: 'search p50, 100k tools on 10k endpoints',
    compare: '<=',
    limit: 5,
    unit: 'ms',
    figures: perBackend((row) => ({
      value: num(row, 'p50_ms'),
      detail: `${num(row, 'samples')} searches, ${num(row, 'tools')} tools`,
    })),
  },
  {
    bench: 'tool-search',
    name: 'search p99, 100k tools on 10k endpoints',
    compare: '<=',
    limit: 20,
    unit: 'ms',
    figures: perBackend((row) => ({
      value: num(row, 'p99_ms'),
      detail: `${num(row, 'samples')} searches, ${num(row, 'tools')} tools`,
    })),
  },
  {
    bench: 'probe-round',
    name: 'one round over 1,000 endpoints',
    compare: '<=',
    limit: 60,
    unit: 's',
    figures: perBackend((row) => ({
      value: num(row, 'round_s'),
      detail: `${num(row, 'healthy')}/${num(row, 'probed')} healthy, ${num(row, 'tools')} tools`,
    })),
  },
  {
    bench: 'probe-round',
    name: 'peak RSS during the round',
    compare: '<',
    limit: 300,
    unit: 'MB',
    figures: perBackend((row) => ({
      value: num(row, 'peak_rss_mb'),
      detail: `${num(row, 'rss_before_mb')} MB before the round, heap after GC ${num(row, 'heap_after_gc_mb')} MB`,
    })),
  },
  {
    bench: 'agpk',
    name: 'pack + validate, 10,000 files / 200 MB',
    compare: '<=',
    limit: 5,
    unit: 's',
    figures: (r) => [
      {
        value: at(r, 'validate_ok') === false ? undefined : seconds(num(r, 'pack_plus_validate_ms')),
        detail: `pack ${seconds(num(r, 'pack_ms'))} s + validate ${seconds(num(r, 'validate_archive_ms'))} s${at(r, 'validate_ok') === false ? '; validation FAILED' : ''}`,
      },
    ],
  },
  {
    bench: 'agpk',
    name: 'sha256 throughput vs `sha256sum`',
    compare: '>=',
    limit: 0.8,
    unit: '',
    figures: (r) => [
      {
        value: at(r, 'same_digest') === false ? undefined : num(r, 'sha256file_ratio'),
        detail: `${num(r, 'sha256file_mb_s')} vs ${num(r, 'sha256sum_mb_s')} MB/s on ${num(r, 'hash_file_mb')} MB${at(r, 'same_digest') === false ? '; digests DIFFER' : ''}`,
      },
    ],
  },
  {
    bench: 'soak',
    name: 'server RSS growth, end of minute 1 to the end, 10 min mixed traffic',
    compare: '<',
    limit: 10,
    unit: '%',
    figures: perBackend(
      (row) => ({
        value: num(row, 'rss_growth_pct'),
        detail:
          `${num(row, 'rss_warm_mb')} → ${num(row, 'rss_end_mb')} MB over ${num(row, 'soak_s')} s, ${num(row, 'requests_per_s')} req/s, ${num(row, 'failures')} failures` +
          (num(row, 'heap_after_gc_warm_mb') !== undefined
            ? `; live heap after a full GC ${num(row, 'heap_after_gc_warm_mb')} → ${num(row, 'heap_after_gc_end_mb')} MB`
            : '') +
          (Array.isArray(row['load_avg_start'])
            ? `; load ${at(row, 'load_avg_start', '0')} → ${at(row, 'load_avg_end', '0')}`
            : ''),
      }),
      soakRows,
    ),
  },
  {
    bench: 'soak',
    name: 'server RSS peak after minute 1 over RSS at minute 1 (is memory flat?)',
    compare: '<',
    limit: 10,
    unit: '%',
    figures: perBackend((row) => {
      const [warm, peak] = [num(row, 'rss_warm_mb'), num(row, 'rss_peak_mb')];
      const byMinute = Array.isArray(row['rss_by_minute_mb'])
        ? ` by minute ${(row['rss_by_minute_mb'] as number[]).join(', ')}`
        : '';
      return {
        value:
          num(row, 'rss_peak_growth_pct') ??
          (warm && peak ? Number((((peak - warm) / warm) * 100).toFixed(1)) : undefined),
        detail: `${warm} → peak ${peak} MB;${byMinute}`,
      };
    }, soakRows),
  },
];

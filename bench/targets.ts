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
};
/** Gateways whose receipts are committed before the answer (the throughput target says "with sync receipts"). */
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
  withReference = false,
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
          detail: `passthrough ${pass ?? '–'} / aggregate ${agg ?? '–'}${withReference ? referenceDetail(result, upstream, field) : ''}`,
        };
      }),
    );
  };
}

/** The reference proxy's figure beside a gateway's (bench/fixtures/bare-gateway.mjs), when the run had one. */
function referenceDetail(result: BenchResult, upstream: string, field: string): string {
  const bare = num(result, upstream, 'reference_bare', field);
  const stored = num(result, upstream, 'reference_bare-postgres', field);
  if (bare === undefined && stored === undefined) return '';
  return `; a bare proxy ${bare ?? '–'}, with sync receipt rows on PostgreSQL ${stored ?? '–'}`;
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
    name: 'throughput vs direct, c=32',
    compare: '>=',
    limit: 0.7,
    unit: '',
    figures: gatewayFigures('throughput_ratio', 'min', syncReceipts, true),
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
          detail: `${num(r, 'receipts', g, 'receipts')} receipts / ${num(r, 'receipts', g, 'calls')} calls, ${num(r, 'receipts', g, 'record_failures')} record failures`,
        };
      }),
  },
  {
    bench: 'chat-proxy',
    name: 'added time to first chunk p50, c=1',
    compare: '<=',
    limit: 2,
    unit: 'ms',
    figures: (r) => [
      {
        value: num(r, 'added_first_chunk_p50_ms'),
        detail: `${num(r, 'first_chunk_p50_proxied_ms')} vs ${num(r, 'first_chunk_p50_direct_ms')} ms direct; added p99 ${num(r, 'added_first_chunk_p99_ms')} ms`,
      },
    ],
  },
  {
    bench: 'chat-proxy',
    name: 'streamed completions/s vs direct, c=32, median of rounds',
    compare: '>=',
    limit: 0.8,
    unit: '',
    figures: (r) => {
      const rounds = Array.isArray(r['rounds_c32']) ? (r['rounds_c32'] as { direct: number; proxied: number }[]) : [];
      const bare = num(r, 'reference_bare_ratio_c32') ?? num(r, 'reference_ratio_c32');
      const essentials = num(r, 'reference_essentials_ratio_c32');
      const referenceDetail = `${bare === undefined ? '' : `; a bare reference proxy ${bare}`}${essentials === undefined ? '' : `, one doing the essentials ${essentials}`}`;
      return [
        {
          value: num(r, 'throughput_ratio_c32'),
          detail: `req/s proxied/direct per round: ${rounds.map((x) => `${x.proxied}/${x.direct}`).join(', ')}${referenceDetail}`,
        },
      ];
    },
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

/**
 * The summary's comparison table (issue 36): every proxy the gateway and chat benchmarks ran —
 * Plaza, the in-house references, the npm peers — with its CPU per call at c=32 (the proxy
 * process's CPU over the calls it answered: the figure that survives core sharing), its
 * throughput over direct at c=32, its added p50/p99 at c=1, its RSS under c=32 load, and what it
 * does and does not do per call. Built from bench/results/gateway.json and chat-proxy.json.
 */
import { type BenchResult, num } from './targets.ts';

/** What each of Plaza's gateway rows and the references do per call (the peers' notes come with their results). */
const GATEWAY_NOTES: Record<string, string> = {
  passthrough:
    'Plaza `/mcp/p/<provider>`: agent token checked (sha256, cached 2 s), sealed session, identity stamped in `_meta` and headers, Ed25519 assertion, answer read, stamped and digested, receipt chained',
  aggregate: 'Plaza `/mcp`: the same per call, the tool routed by its catalog name over a pooled upstream session',
  reference_bare:
    'in-house floor: identity stamp and assertion, forward, answer parsed, stamped and digested; no bearer check, no receipt',
  'reference_bare-postgres': 'the floor plus a receipt row committed to PostgreSQL before the answer; no bearer check',
  'reference_same-work-postgres':
    'the same work as Plaza per call, the cheapest way: bearer checked as an agent token (sha256, cached 2 s), identity stamp and assertion, receipt row group-committed to PostgreSQL before the answer; no receipt chain, sealed sessions, limits, telemetry',
  'reference_same-work-pglite': 'the same, its receipt rows in an embedded PGlite data folder',
};

const RECEIPTS: Record<string, string> = {
  postgres: 'sync receipts on PostgreSQL',
  'postgres-async': 'async receipts on PostgreSQL',
  pglite: 'sync receipts on PGlite',
  'pglite-async': 'async receipts on PGlite',
  memory: 'receipts counted in memory',
};

const CHAT_NOTES: Record<string, string> = {
  plaza:
    'guest token verified (cached), body and size checked, rate limits and token budgets, model routed, the stream read for its usage, a usage row written, request id, logs, security headers',
  reference_bare: 'in-house floor: a fixed bearer compared, the body forwarded, the answer’s bytes passed through',
  reference_essentials:
    'in-house essentials: a verified and cached token, the body checked, a request count, the usage found in the stream and written to PGlite (batched)',
};

const cell = (v: number | undefined, unit = '') => (v === undefined ? '–' : `${v}${unit}`);
const signed = (v: number | undefined) => (v === undefined ? '–' : `${v >= 0 ? '+' : ''}${v} ms`);
const text = (s: string) => s.replaceAll('|', '\\|');

function gatewayRow(result: BenchResult, upstream: string, key: string, label: string, note: string): string {
  const f = (field: string) => num(result, upstream, key, field);
  return `| ${label} | ${cell(f('c32_gateway_cpu_us_per_call'))} | ${cell(f('throughput_ratio'))} | ${signed(f('added_p50_ms'))} / ${signed(f('added_p99_ms'))} | ${cell(f('c32_rss_mb'), ' MB')} | ${text(note)} |`;
}

/** One table per upstream of the gateway result. */
function gatewayTables(result: BenchResult): string[] {
  const lines: string[] = [];
  const peers = (result['peers'] ?? {}) as Record<string, { version: string; does: string; doesNot: string }>;
  const upstreams = Object.keys(result).filter((k) => num(result, k, 'direct', 'c32_rps') !== undefined);
  for (const upstream of upstreams) {
    const rows = Object.keys(result[upstream] as object).filter((k) => k !== 'direct');
    lines.push(
      `### MCP gateway, ${upstream} upstream (direct: ${num(result, upstream, 'direct', 'c32_rps')} calls/s at c=32, p50 ${num(result, upstream, 'direct', 'c1_p50_ms')} ms at c=1)`,
      '',
      '| Path | CPU µs per call, c=32 | ÷ direct, c=32 | added p50 / p99, c=1 | RSS under c=32 | Per call: does / does not |',
      '|---|---|---|---|---|---|',
    );
    for (const key of rows) {
      const [kind, ...rest] = key.split('_');
      const label = rest.join('_');
      if (kind === 'passthrough' || kind === 'aggregate')
        lines.push(
          gatewayRow(
            result,
            upstream,
            key,
            `Plaza ${kind === 'passthrough' ? '`/mcp/p/…`' : '`/mcp`'}, ${RECEIPTS[label] ?? label}`,
            GATEWAY_NOTES[kind]!,
          ),
        );
      else if (kind === 'reference')
        lines.push(gatewayRow(result, upstream, key, `in-house reference \`${label}\``, GATEWAY_NOTES[key] ?? ''));
      else if (kind === 'peer') {
        const p = peers[label];
        lines.push(gatewayRow(result, upstream, key, p?.version ?? label, p ? `${p.does}; ${p.doesNot}` : ''));
      }
    }
    lines.push('');
  }
  return lines;
}

function chatTable(r: BenchResult): string[] {
  const peers = (r['peers'] ?? {}) as Record<string, { version: string; does: string; doesNot: string }>;
  const lines = [
    `### Chat proxy, streamed completions (direct p50 to first chunk ${num(r, 'first_chunk_p50_direct_ms')} ms at c=1)`,
    '',
    '| Path | CPU µs per completion, c=32 | ÷ direct, c=32 | added first chunk p50 / p99, c=1 | RSS under c=32 | Per completion: does / does not |',
    '|---|---|---|---|---|---|',
    `| Plaza \`/api/v1/chat/completions\` | ${cell(num(r, 'cpu_us_per_completion_c32', 'proxied', 'plaza'))} | ${cell(num(r, 'throughput_ratio_c32'))} | ${signed(num(r, 'added_first_chunk_p50_ms'))} / ${signed(num(r, 'added_first_chunk_p99_ms'))} | ${cell(num(r, 'plaza_rss_c32_mb'), ' MB')} | ${text(CHAT_NOTES['plaza']!)} |`,
  ];
  const keys = Object.keys(r)
    .filter((k) => k.endsWith('_cpu_us_per_completion_c32') && (k.startsWith('reference_') || k.startsWith('peer_')))
    .map((k) => k.slice(0, -'_cpu_us_per_completion_c32'.length));
  for (const key of keys) {
    const peer = key.startsWith('peer_') ? peers[key.slice(5)] : undefined;
    const label = peer ? peer.version : `in-house reference \`${key.slice('reference_'.length)}\``;
    const note = peer ? `${peer.does}; ${peer.doesNot}` : (CHAT_NOTES[key] ?? '');
    lines.push(
      `| ${label} | ${cell(num(r, `${key}_cpu_us_per_completion_c32`, 'reference'))} | ${cell(num(r, `${key}_ratio_c32`))} | ${signed(num(r, `${key}_added_first_chunk_p50_ms`))} / ${signed(num(r, `${key}_added_first_chunk_p99_ms`))} | ${cell(num(r, `${key}_rss_c32_mb`), ' MB')} | ${text(note)} |`,
    );
  }
  lines.push('');
  return lines;
}

/** The section, or nothing when neither result has peers (results saved before issue 36). */
export function peerTables(gateway: BenchResult | undefined, chat: BenchResult | undefined): string[] {
  const lines: string[] = [];
  const when = (r: BenchResult) =>
    `${String(r['date']).slice(0, 16).replace('T', ' ')} UTC${typeof r['runs'] === 'number' ? `, median of ${r['runs']} runs` : ''}, load ${num(r, 'load_average_1m', 'before') ?? '?'} → ${num(r, 'load_average_1m', 'after') ?? '?'}`;
  if (gateway?.['peers']) lines.push(...gatewayTables(gateway), `Gateway figures of ${when(gateway)}.`, '');
  if (chat?.['peers']) lines.push(...chatTable(chat), `Chat figures of ${when(chat)}.`, '');
  if (lines.length === 0) return [];
  return [
    '## Plaza beside its peers and the in-house references',
    '',
    'CPU per call is the proxy process’s CPU time over the calls it answered at c=32, the figure that survives sharing the cores with the load generator and the upstream; the ratio to direct and the added latency move with the machine’s load.',
    '',
    ...lines,
  ];
}

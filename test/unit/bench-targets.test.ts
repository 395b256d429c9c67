import { describe, expect, it } from 'vitest';

import { medianOf } from '../../bench/merge-runs.ts';
import { peerTables } from '../../bench/peer-table.ts';
import { meets } from '../../bench/summary.ts';
import { type BenchResult, TARGETS } from '../../bench/targets.ts';

/** A gateway result of the shape bench/gateway.ts saves, with round figures. */
function gatewayResult(plazaCpu: number, hubRss: number): BenchResult {
  const plaza = (cpu: number, rss: number) => ({
    c32_gateway_cpu_us_per_call: cpu,
    c32_rss_mb: rss,
    throughput_ratio: 0.4,
    added_p50_ms: 0.9,
    added_p99_ms: 3,
  });
  return {
    gateways: ['postgres', 'pglite'],
    peers: { 'mcp-hub': { version: 'mcp-hub 4.2.1', does: 'routes', doesNot: 'no auth' } },
    mini: {
      direct: { c32_rps: 10_000, c1_p50_ms: 0.1 },
      passthrough_postgres: plaza(plazaCpu, 200),
      aggregate_postgres: plaza(plazaCpu - 50, 210),
      passthrough_pglite: plaza(plazaCpu, 450),
      aggregate_pglite: plaza(plazaCpu, 460),
      'reference_same-work-postgres': { c32_gateway_cpu_us_per_call: 200 },
      'reference_same-work-pglite': { c32_gateway_cpu_us_per_call: 250 },
      'peer_mcp-hub': { c32_gateway_cpu_us_per_call: 400, c32_rss_mb: hubRss },
      'peer_mcp-proxy': { c32_gateway_cpu_us_per_call: 500, c32_rss_mb: 300 },
    },
  };
}

function rows(bench: string, name: string, result: BenchResult) {
  const target = TARGETS.find((t) => t.bench === bench && t.name.startsWith(name))!;
  return target.figures(result).map((f) => ({ variant: f.variant, value: f.value, met: meets(target, f.value) }));
}

describe('the restated targets (issue 36)', () => {
  it('holds the worse endpoint against the same-work reference of its own backend', () => {
    expect(rows('gateway', 'CPU per call at c=32, over the in-house reference', gatewayResult(350, 250))).toEqual([
      { variant: 'mini upstream, PostgreSQL', value: 1.75, met: false },
      { variant: 'mini upstream, PGlite', value: 1.4, met: true },
    ]);
  });

  it('holds Plaza below the cheapest peer', () => {
    const [below] = rows('gateway', 'CPU per call at c=32, over the cheapest npm peer', gatewayResult(350, 250));
    expect(below).toMatchObject({ value: 0.875, met: true });
    const [above] = rows('gateway', 'CPU per call at c=32, over the cheapest npm peer', gatewayResult(400, 250));
    expect(above).toMatchObject({ value: 1, met: false });
  });

  it('holds RSS to mcp-hub’s on PostgreSQL and to 1.5× on PGlite', () => {
    expect(rows('gateway', 'RSS under c=32 load over mcp-hub’s, PostgreSQL', gatewayResult(350, 250))).toEqual([
      { variant: 'mini upstream, PostgreSQL', value: 0.84, met: true },
    ]);
    expect(rows('gateway', 'RSS under c=32 load over mcp-hub’s, PGlite', gatewayResult(350, 250))).toEqual([
      { variant: 'mini upstream, PGlite', value: 1.84, met: false },
    ]);
  });

  it('reads the chat proxy against the essentials reference and Portkey', () => {
    const chat: BenchResult = {
      cpu_us_per_completion_c32: { proxied: { plaza: 150 } },
      reference_essentials_cpu_us_per_completion_c32: { reference: 100 },
      peer_portkey_cpu_us_per_completion_c32: { reference: 400 },
    };
    expect(rows('chat-proxy', 'CPU per streamed completion at c=32, over the in-house', chat)[0]).toMatchObject({
      value: 1.5,
      met: true,
    });
    expect(rows('chat-proxy', 'CPU per streamed completion at c=32, over the cheapest', chat)[0]).toMatchObject({
      value: 0.375,
      met: true,
    });
  });

  it('gives no figure where a yardstick was not measured', () => {
    const result = gatewayResult(350, 250);
    delete (result['mini'] as Record<string, unknown>)['reference_same-work-pglite'];
    expect(rows('gateway', 'CPU per call at c=32, over the in-house reference', result)[1]).toMatchObject({
      value: undefined,
      met: undefined,
    });
  });
});

describe('three runs’ medians', () => {
  it('takes numbers by median, booleans only when every run holds, the rest from the first run', () => {
    const runs = [
      { a: 1, b: { c: 0.5, ok: true, s: 'x' }, list: [{ n: 3 }] },
      { a: 9, b: { c: 0.7, ok: false, s: 'y' }, list: [{ n: 1 }] },
      { a: 4, b: { c: 0.6, ok: true, s: 'z' }, list: [{ n: 2 }] },
    ];
    expect(medianOf(runs)).toEqual({ a: 4, b: { c: 0.6, ok: false, s: 'x' }, list: [{ n: 2 }] });
  });
});

describe('the peers table', () => {
  it('lists Plaza, the references and each peer with its notes', () => {
    const text = peerTables({ ...gatewayResult(350, 250), date: '2026-11-29T07:00:00Z' }, undefined).join('\n');
    expect(text).toContain('| Plaza `/mcp/p/…`, sync receipts on PostgreSQL | 350 | 0.4 | +0.9 ms / +3 ms | 200 MB |');
    expect(text).toContain('| mcp-hub 4.2.1 | 400 |');
    expect(text).toContain('routes; no auth');
  });
});

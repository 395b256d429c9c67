/**
 * OpenTelemetry per gateway call, the way `plaza serve` starts it: a child process (ESM hook
 * first, in-memory exporters) calls server-everything through `/mcp/p/everything` and `/mcp`;
 * every tools/call gives one `mcp.tools/call` span (provider, tool, agent, AGIN id, outcome,
 * receipt id, upstream latency) and is counted by provider/outcome with latency histograms. The
 * caller's third-party credential never reaches a span.
 *
 * The same child also proves OpenTelemetry works in ESM the way `plaza serve` starts it (the
 * `telemetry` test, once test/integration/telemetry.test.ts with a child of its own): a plain
 * request gives an HTTP server span and Express spans, queries give Prisma spans (its
 * instrumentation runs on the one @opentelemetry/instrumentation installed), and a bearer credential is no span
 * attribute. One child for both saves a start of the SDK, the app and an embedded database.
 */
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runChild } from '../support/children.ts';
import { TEST_NODE_ARGS, TS_LOADER_ARGS } from '../support/cli.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';

interface Report {
  agent: { id: string; agin_id: string };
  calls: { path: string; callId: string | undefined; isError: boolean }[];
  spans: {
    name: string;
    kind: number;
    scope: string;
    status: { code: number; message?: string };
    attributes: Record<string, unknown>;
    parent: string | null;
  }[];
  metrics: { name: string; unit: string; points: { attributes: Record<string, unknown>; value: any }[] }[];
  receipts: { call_id: string; status: string; provider: string; tool: string; agin_id: string }[];
}

/** The child's whole stdout and its report (its last line), from one run shared by the tests below. */
let stdout: string;
let report: Report;
let everything: EverythingServer;
beforeAll(async () => {
  everything = await startEverything();
  const child = join(import.meta.dirname, '..', 'fixtures', 'otel-gateway-child.ts');
  const result = await runChild(process.execPath, [...TEST_NODE_ARGS, ...TS_LOADER_ARGS, child], {
    timeoutMs: 90_000,
    env: { ...process.env, EVERYTHING_URL: everything.url },
  });
  if (result.code !== 0)
    throw new Error(`the telemetry child exited with ${result.code ?? result.signal}:\n${result.stderr}`);
  ({ stdout } = result);
  report = JSON.parse(stdout.trim().split('\n').pop()!) as Report;
}, 120_000);
afterAll(async () => {
  await everything?.stop();
});

describe('telemetry', () => {
  it('produces an HTTP server span and Express spans for a request, without credentials', () => {
    const server = report.spans.find(
      (s) =>
        s.scope === '@opentelemetry/instrumentation-http' && s.kind === 1 && s.attributes['http.route'] === '/health',
    );
    expect(server).toMatchObject({
      name: 'GET /health',
      attributes: { 'http.route': '/health', 'http.response.status_code': 200 },
    });
    expect(report.spans.some((s) => s.scope === '@opentelemetry/instrumentation-express')).toBe(true);
    expect(stdout).not.toContain('super-secret-token');
  });

  it('produces Prisma query spans (its instrumentation shares the one @opentelemetry/instrumentation)', () => {
    expect(report.spans.filter((s) => s.scope === 'prisma').map((s) => s.name)).toEqual(
      expect.arrayContaining(['prisma:client:operation', 'prisma:client:db_query']),
    );
  });

  it('names the route of a chat completion answered before Express, as Express would', () => {
    const server = report.spans.find(
      (s) =>
        s.scope === '@opentelemetry/instrumentation-http' &&
        s.kind === 1 &&
        s.attributes['http.route'] === '/api/v1/chat/completions',
    );
    expect(server).toMatchObject({
      name: 'POST /api/v1/chat/completions',
      attributes: { 'http.response.status_code': 200 },
    });
  });
});

describe('gateway telemetry', () => {
  it('gives every tools/call a span with its outcome and receipt, and counts it', () => {
    expect(stdout).not.toContain('upstream-secret-4711');
    const [echo, missing, aggregated, own] = report.calls;
    expect(echo).toMatchObject({ path: 'passthrough', isError: false, callId: expect.stringMatching(/^call_/) });
    expect(aggregated).toMatchObject({ path: 'aggregate', isError: false, callId: expect.stringMatching(/^call_/) });
    expect(missing!.isError).toBe(true);
    expect(own).toMatchObject({ path: 'platform', isError: false, callId: expect.stringMatching(/^call_/) });

    const allSpans = report.spans.filter((s) => s.scope === 'plaza-gateway');
    // One span per call, one receipt per call, and they name each other.
    expect(allSpans).toHaveLength(4);
    expect(report.receipts).toHaveLength(4);
    // Plaza's own provider, served in process: no upstream, so no upstream latency.
    const ownSpan = allSpans.find((s) => s.attributes['plaza.call_id'] === own!.callId)!;
    expect(ownSpan.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'plaza.gateway.path': 'passthrough',
      'plaza.provider': 'platform',
      'plaza.tool': 'account_auth_options',
      'plaza.agin_id': report.agent.agin_id,
      'plaza.outcome': 'ok',
      'plaza.receipt.id': own!.callId,
      'plaza.receipt.recorded': true,
    });
    expect(report.receipts.find((r) => r.call_id === own!.callId)).toMatchObject({
      provider: 'platform',
      status: 'ok',
    });
    const spans = allSpans.filter((s) => s !== ownSpan);
    for (const span of spans) {
      expect(span.name).toBe('mcp.tools/call');
      const receipt = report.receipts.find((r) => r.call_id === span.attributes['plaza.receipt.id']);
      expect(receipt).toBeDefined();
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'plaza.provider': 'everything',
        'plaza.tool': receipt!.tool,
        'plaza.agent.id': report.agent.id,
        'plaza.agin_id': report.agent.agin_id,
        'plaza.call_id': receipt!.call_id,
        'plaza.outcome': receipt!.status,
        'plaza.receipt.recorded': true,
      });
      expect(span.attributes['plaza.upstream.latency_ms']).toEqual(expect.any(Number));
      expect(span.attributes['plaza.upstream.latency_ms'] as number).toBeGreaterThan(0);
      expect(span.attributes['plaza.call.latency_ms']).toEqual(expect.any(Number));
      // A child of the inbound HTTP request's span, so a trace shows the call inside its request.
      expect(span.parent).not.toBeNull();
    }
    const byCall = (id: string | undefined) => spans.find((s) => s.attributes['plaza.call_id'] === id)!;
    expect(byCall(echo!.callId).attributes).toMatchObject({
      'plaza.gateway.path': 'passthrough',
      'plaza.tool': 'echo',
      'plaza.outcome': 'ok',
    });
    expect(byCall(aggregated!.callId).attributes).toMatchObject({
      'plaza.gateway.path': 'aggregate',
      'plaza.tool': 'echo',
      'plaza.outcome': 'ok',
    });
    const failed = spans.find((s) => s.attributes['plaza.tool'] === 'no-such-tool')!;
    expect(failed.attributes['plaza.outcome']).toBe('error');
    expect(failed.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(report.receipts.find((r) => r.tool === 'no-such-tool')?.status).toBe('error');

    const metric = (name: string) => report.metrics.find((m) => m.name === name);
    const counter = metric('plaza.gateway.calls')!;
    const count = (path: string, outcome: string) =>
      counter.points.find(
        (p) =>
          p.attributes['plaza.gateway.path'] === path &&
          p.attributes['plaza.outcome'] === outcome &&
          p.attributes['plaza.provider'] === 'everything',
      )?.value;
    expect(count('passthrough', 'ok')).toBe(1);
    expect(count('passthrough', 'error')).toBe(1);
    expect(count('aggregate', 'ok')).toBe(1);
    expect(
      counter.points.find(
        (p) => p.attributes['plaza.provider'] === 'platform' && p.attributes['plaza.outcome'] === 'ok',
      )?.value,
    ).toBe(1);
    // Every call's whole latency; the upstream's only where there is an upstream.
    for (const [name, calls] of [
      ['plaza.gateway.call.duration', 4],
      ['plaza.gateway.upstream.duration', 3],
    ] as const) {
      const histogram = metric(name)!;
      expect(histogram.unit).toBe('ms');
      expect(histogram.points.reduce((n, p) => n + p.value.count, 0)).toBe(calls);
      expect(histogram.points.every((p) => p.value.sum > 0)).toBe(true);
    }
  });
});

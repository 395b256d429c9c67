/**
 * Proves OpenTelemetry works in ESM the way `plaza serve` starts it: a child process registers the
 * instrumentation hook before loading the app, serves one request, and reports its spans from an
 * in-memory exporter. Credentials never become span attributes.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { TS_LOADER_ARGS } from '../support/cli.ts';

const run = promisify(execFile);

describe('telemetry', () => {
  it('produces an HTTP server span and Express spans for a request, without credentials', async () => {
    const child = join(import.meta.dirname, '..', 'fixtures', 'otel-child.ts');
    const { stdout } = await run(process.execPath, [...TS_LOADER_ARGS, child], { timeout: 60_000 });
    const spans = JSON.parse(stdout.trim().split('\n').pop()!) as { name: string; kind: number; scope: string; attributes: Record<string, unknown> }[];
    const server = spans.find((s) => s.scope === '@opentelemetry/instrumentation-http' && s.kind === 1);
    expect(server).toMatchObject({ name: 'GET /health', attributes: { 'http.route': '/health', 'http.response.status_code': 200 } });
    expect(spans.some((s) => s.scope === '@opentelemetry/instrumentation-express')).toBe(true);
    expect(stdout).not.toContain('super-secret-token');
  });
});

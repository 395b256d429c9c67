/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance server --suite all`) against the
 * project's conformance target server (test/fixtures/conformance), directly, through
 * `/mcp/p/<provider>` and through `/mcp` (the suite's names mapped to `<provider>__<name>` by the
 * test's forwarder; test/support/conformance-targets.ts). Every scenario that passes directly must
 * pass through both, except those test/e2e/conformance-expectations.ts names with a reason; a named
 * scenario that passes fails the test too, so the lists stay true. Also: the target passes every
 * scenario but the ones DIRECT names, and calls through Plaza leave receipts.
 *
 * Skipped when the conformance package is not installed (`CONFORMANCE_BIN` may name its CLI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Check, conformanceBin, failures, scenarioPassed, type SuiteRun } from '../support/conformance.ts';
import {
  type ConformanceTargets,
  PROVIDER,
  runAllTargets,
  startConformanceTargets,
} from '../support/conformance-targets.ts';
import { AGGREGATE, DIRECT, type Expectation, PASSTHROUGH } from './conformance-expectations.ts';

/** What is wrong with `run` against `expected` (scenarios of `among` only): one line per surprise. */
function surprises(label: string, run: SuiteRun, among: string[], expected: Record<string, Expectation>): string[] {
  const out: string[] = [];
  for (const name of among) {
    const checks: Check[] | undefined = run.scenarios.get(name);
    const passed = scenarioPassed(checks);
    if (expected[name] && passed)
      out.push(`${label} ${name}: passes now, remove it from the expectations ("${expected[name].reason}")`);
    if (!expected[name] && !passed) out.push(`${label} ${name}: fails — ${failures(checks).slice(0, 3).join(' | ')}`);
  }
  for (const name of Object.keys(expected))
    if (!among.includes(name))
      out.push(`${label} ${name}: listed, but it is not a scenario this comparison covers (stale entry)`);
  return out;
}

describe.skipIf(!conformanceBin())(
  'MCP conformance: the target directly, through /mcp/p/<provider> and through /mcp',
  () => {
    let targets: ConformanceTargets;
    let runs: Awaited<ReturnType<typeof runAllTargets>>;

    beforeAll(async () => {
      targets = await startConformanceTargets();
      runs = await runAllTargets(targets);
    }, 240_000);

    afterAll(async () => {
      await targets?.close();
    });

    it('the conformance target passes every scenario but the ones DIRECT names', () => {
      const all = [...runs.direct.scenarios.keys()];
      // The suite ran in full (65 server scenarios in 0.2.0-alpha.12), or the comparison proves little.
      expect(all.length, runs.direct.output.slice(-3000)).toBeGreaterThanOrEqual(60);
      expect(surprises('direct', runs.direct, all, DIRECT)).toEqual([]);
    });

    it('every scenario passing directly passes through /mcp/p/<provider>, except the expected ones', () => {
      const passing = [...runs.direct.scenarios].filter(([, c]) => scenarioPassed(c)).map(([name]) => name);
      expect(
        surprises('passthrough', runs.passthrough, passing, PASSTHROUGH),
        runs.passthrough.output.slice(-3000),
      ).toEqual([]);
    });

    it('every scenario passing directly passes through /mcp (names mapped), except the expected ones', () => {
      const passing = [...runs.direct.scenarios].filter(([, c]) => scenarioPassed(c)).map(([name]) => name);
      expect(surprises('aggregate', runs.aggregate, passing, AGGREGATE), runs.aggregate.output.slice(-3000)).toEqual(
        [],
      );
    });

    it('the calls the suite made through Plaza left receipts', async () => {
      const [row] = await targets.plaza.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "receipts" WHERE "provider" = $1`,
        PROVIDER,
      );
      expect(row!.n).toBeGreaterThan(0);
    });
  },
);

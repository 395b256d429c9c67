/**
 * `npm run conformance`: runs the MCP conformance suite (`--suite all`) against the project's
 * conformance target server directly, through Plaza's `/mcp/p/<provider>`, and through `/mcp`
 * (names mapped by the test's forwarder), and prints one row per scenario (✓ passes, ✗ fails,
 * - did not run) with the totals; `--failures` adds each failing scenario's failed checks.
 * The same setup as test/e2e/conformance.test.ts (test/support/conformance-targets.ts).
 */
import { failures, formatTable, scenarioPassed } from '../test/support/conformance.ts';
import { runAllTargets, startConformanceTargets } from '../test/support/conformance-targets.ts';

const started = Date.now();
const targets = await startConformanceTargets();
try {
  const runs = await runAllTargets(targets);
  const table = formatTable([
    { label: 'direct', run: runs.direct },
    { label: 'passthrough', run: runs.passthrough },
    { label: 'aggregate', run: runs.aggregate },
  ]);
  process.stdout.write(`${table}\n(${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  if (process.argv.includes('--failures'))
    for (const [label, run] of Object.entries(runs))
      for (const [name, checks] of run.scenarios)
        if (!scenarioPassed(checks)) process.stdout.write(`\n${label} ${name}:\n  ${failures(checks).join('\n  ')}\n`);
} finally {
  await targets.close();
}

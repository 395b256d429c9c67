/** `npm run bench`: runs every benchmark in turn and prints one table of figures beside targets. */
import { benchHealthThroughput } from './health-throughput.ts';
import { machine } from './lib.ts';
import { benchStartup } from './startup.ts';

const benches: [string, () => Promise<Record<string, unknown>>][] = [
  ['startup', benchStartup],
  ['health-throughput', benchHealthThroughput],
];

const only = process.argv.slice(2);
console.log(`machine: ${machine()}  date: ${new Date().toISOString()}`);
for (const [name, run] of benches) {
  if (only.length > 0 && !only.includes(name)) continue;
  console.log(`\n## ${name}`);
  console.table(await run());
}

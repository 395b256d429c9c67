/** `npm run bench`: runs every benchmark in turn and prints one table of figures beside targets. */
import { benchAgpk } from './agpk.ts';
import { benchChatProxy } from './chat-proxy.ts';
import { benchGateway } from './gateway.ts';
import { benchHealthThroughput } from './health-throughput.ts';
import { machine } from './lib.ts';
import { benchProbeRound } from './probe-round.ts';
import { benchSoak } from './soak.ts';
import { benchStartup } from './startup.ts';
import { benchToolSearch } from './tool-search.ts';
import { benchWebsite } from './website.ts';

const benches: [string, () => Promise<Record<string, unknown>>][] = [
  ['startup', benchStartup],
  ['health-throughput', benchHealthThroughput],
  ['gateway', benchGateway],
  ['agpk', benchAgpk],
  ['website', benchWebsite],
  ['chat-proxy', benchChatProxy],
  ['tool-search', async () => ({ rows: await benchToolSearch() })],
  ['probe-round', async () => ({ rows: await benchProbeRound() })],
  ['soak', benchSoak],
];

const only = process.argv.slice(2);
console.log(`machine: ${machine()}  date: ${new Date().toISOString()}`);
for (const [name, run] of benches) {
  if (only.length > 0 && !only.includes(name)) continue;
  console.log(`\n## ${name}`);
  const figures = await run();
  // Flat figures read best as a table; nested ones (per upstream, per route) as JSON.
  if (Object.values(figures).some((v) => typeof v === 'object' && v !== null)) console.log(JSON.stringify(figures, null, 2));
  else console.table(figures);
}

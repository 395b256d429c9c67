/**
 * The three conformance targets, set up once: the project's conformance target server
 * (test/fixtures/conformance) directly; a real Plaza (PGlite) that lists it as provider
 * `conformance`, probed healthy, with an agent and its bearer token; and in front of Plaza a
 * forwarder to `/mcp/p/conformance` (adds the token) and one to `/mcp` (adds the token, maps the
 * suite's names to `conformance__<name>` and URIs as `/mcp` lists them). Used by
 * test/e2e/conformance.test.ts and `npm run conformance` (scripts/conformance.ts).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { startConformanceTarget } from '../fixtures/conformance/http.ts';
import { runConformance, type SuiteRun } from './conformance.ts';
import { aggregateMapping, type Forwarder, learnUriMapping, startForwarder } from './conformance-forwarders.ts';
import { startTestPlaza, type TestPlaza } from './plaza.ts';

export const PROVIDER = 'conformance';

/** The running targets. */
export interface ConformanceTargets {
  direct: string;
  passthrough: string;
  aggregate: string;
  plaza: TestPlaza;
  /** How `/mcp` wrote the fixture's resource URIs (undefined: `/mcp` listed none of them). */
  uriMapping: ReturnType<typeof learnUriMapping>;
  close(): Promise<void>;
}

async function apiClient(plaza: TestPlaza) {
  const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
  const { apiKey } = await accounts.createAccount({ email: 'conformance@example.com' });
  return async (path: string, body?: unknown) => {
    const res = await fetch(`${plaza.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, any>;
  };
}

/** Registers `url` as PROVIDER, waits until the probe marks it healthy; returns an agent's token. */
async function listProvider(plaza: TestPlaza, url: string): Promise<string> {
  const api = await apiClient(plaza);
  const listed = await api('/api/mcp/listings', {
    provider: PROVIDER,
    url,
    registered_by: 'ops@example.com',
    agin_support: true,
    summary: 'The conformance target server of the test suite.',
  });
  let status = 'registered';
  for (let i = 0; i < 200 && status !== 'healthy'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await api(`/api/mcp/endpoints/${listed['id']}`))['status'] as string;
  }
  if (status !== 'healthy') throw new Error(`the conformance target was not probed healthy (status ${status})`);
  return (await api('/api/agents', { display_name: 'Conformance agent' }))['data'].token as string;
}

/** Resource URIs as `url` lists them (any revision the SDK v2 client negotiates); [] when it lists none or refuses. */
async function listResourceUris(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = new Client({ name: 'plaza-conformance-runner', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return (await client.listResources()).resources.map((r) => r.uri);
  } catch {
    return [];
  } finally {
    await client.close().catch(() => {});
  }
}

/** Starts the fixture, Plaza and the two forwarders. */
export async function startConformanceTargets(): Promise<ConformanceTargets> {
  const target = await startConformanceTarget();
  const plaza = await startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn' } });
  const opened: Forwarder[] = [];
  const close = async () => {
    await Promise.allSettled(opened.map((f) => f.close()));
    await plaza.close();
    await target.close();
  };
  try {
    const token = await listProvider(plaza, target.url);
    const headers = { authorization: `Bearer ${token}` };
    const uriMapping = learnUriMapping(
      await listResourceUris(`${plaza.url}/mcp`, headers),
      await listResourceUris(target.url),
    );
    opened.push(await startForwarder(`${plaza.url}/mcp/p/${PROVIDER}`, { headers }));
    opened.push(await startForwarder(`${plaza.url}/mcp`, { headers, mapping: aggregateMapping(PROVIDER, uriMapping) }));
    return { direct: target.url, passthrough: opened[0]!.url, aggregate: opened[1]!.url, plaza, uriMapping, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Runs the suite against the three targets, one after the other (two cores are shared). */
export async function runAllTargets(
  targets: ConformanceTargets,
): Promise<Record<'direct' | 'passthrough' | 'aggregate', SuiteRun>> {
  const direct = await runConformance(targets.direct);
  const passthrough = await runConformance(targets.passthrough);
  const aggregate = await runConformance(targets.aggregate);
  return { direct, passthrough, aggregate };
}

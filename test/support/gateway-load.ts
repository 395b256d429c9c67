/**
 * Gateway traffic against a real `plaza serve` for fault tests: a Plaza with an account and an
 * agent, a provider listed and probed healthy, one `tools/call` through `/mcp/p/<provider>`, and
 * load loops that remember which calls returned a result (their call ids), so a test can check
 * that each of them has exactly one receipt afterwards.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import { randomToken } from '../../src/kernel/index.ts';
import { runPlaza, type ServerProcess, startPlazaServer } from './cli.ts';
import { answerIn } from './json-rpc.ts';

/** A gateway Plaza with the credentials a test needs. */
export interface GatewayPlaza {
  server: ServerProcess;
  dataDir: string;
  /** The environment it was started with (start it again on the same data folder with it). */
  env: Record<string, string>;
  /** The account's e-mail address, its API key and its agent's gateway token. */
  email: string;
  apiKey: string;
  agentToken: string;
}

/** Starts `plaza serve` (embedded database unless `env` names one) with an account and an agent. */
export async function startGatewayPlaza(
  env: Record<string, string> = {},
  gatewayTimeoutMs = 3_000,
): Promise<GatewayPlaza> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plaza-gateway-'));
  const base = {
    PLAZA_DATA_DIR: dataDir,
    PLAZA_BACKGROUND: '0',
    PLAZA_ALLOW_PRIVATE_TARGETS: '1',
    PLAZA_GATEWAY_TIMEOUT_MS: String(gatewayTimeoutMs),
    ...env,
  };
  const server = await startPlazaServer(base);
  const email = `gateway-${randomToken(4)}@example.com`;
  const created = await runPlaza(['accounts', 'create', '--email', email], base);
  if (created.code !== 0) throw new Error(`plaza accounts create failed: ${created.stderr}`);
  const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  const res = await fetch(`${server.url}/api/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ display_name: 'Fault agent', owner_context: 'faults' }),
  });
  const agent = (await res.json()) as { data: { token: string } };
  return { server, dataDir, env: base, email, apiKey, agentToken: agent.data.token };
}

/** A JSON client of Plaza's API with an account key: GET without a body, POST with one. */
export function accountApi(plazaUrl: string, apiKey: string): (path: string, body?: unknown) => Promise<any> {
  return async (path, body) => {
    const res = await fetch(`${plazaUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };
}

/** One request to Plaza's API with `key` as bearer (JSON content type unless `init` sets its own); its status and JSON body. */
export async function apiJson(
  plazaUrl: string,
  key: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${plazaUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  return { status: res.status, body: await res.json() };
}

/** Lists `url` as `provider`, waits until its first probe made it healthy, and returns the endpoint id. */
export async function listHealthy(plazaUrl: string, provider: string, url: string): Promise<string> {
  const res = await fetch(`${plazaUrl}/api/mcp/listings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      provider,
      url,
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: `Fault provider ${provider}; no credentials.`,
    }),
  });
  if (res.status !== 201) throw new Error(`listing ${provider} answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  for (let i = 0; i < 150; i++) {
    const endpoint = (await (await fetch(`${plazaUrl}/api/mcp/endpoints/${id}`)).json()) as { status: string };
    if (endpoint.status === 'healthy') return id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${provider} did not become healthy`);
}

/** The outcome of one call as the client saw it. */
export interface ToolAnswer {
  status: number;
  message: any;
  ms: number;
  bytes: number;
}

/** One tools/call through `/mcp/p/<provider>`; reads a JSON or an SSE answer. */
export async function callTool(
  plazaUrl: string,
  token: string,
  provider: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<ToolAnswer> {
  const started = Date.now();
  const res = await fetch(`${plazaUrl}/mcp/p/${provider}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'act', arguments: args } }),
  });
  const text = await res.text();
  const message = text ? answerIn(text, res.headers.get('content-type'), 1) : undefined;
  return { status: res.status, message, ms: Date.now() - started, bytes: text.length };
}

/** Load from {@link gatewayLoad}: answered call ids and the statuses of every failed call (0: no HTTP answer). */
export interface GatewayLoad {
  answered: string[];
  failures: number[];
  stop(): Promise<void>;
}

/** Calls `provider` from `workers` loops until `stop()`; remembers the call id of every result that arrived. */
export function gatewayLoad(url: string, token: string, provider: string, workers: number): GatewayLoad {
  let running = true;
  const answered: string[] = [];
  const failures: number[] = [];
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; running; i++) {
      try {
        const answer = await callTool(url, token, provider, { message: `w${w}.${i}` });
        if (answer.message?.result?.isError === false)
          answered.push(answer.message.result._meta.platform.call_id as string);
        else {
          failures.push(answer.status);
          await new Promise((r) => setTimeout(r, 50));
        }
      } catch {
        failures.push(0);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
  return {
    answered,
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** How many receipts each call id has in the database at `databaseUrl`. */
export async function receiptCounts(databaseUrl: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ call_id: string; n: string }>(
      `SELECT call_id, count(*) AS n FROM receipts GROUP BY call_id`,
    );
    return new Map(rows.rows.map((r) => [r.call_id, Number(r.n)]));
  } finally {
    await client.end();
  }
}

/** Waits (up to `timeoutMs`) until every call in `callIds` has a receipt, and returns the final counts. */
export async function settledReceiptCounts(
  databaseUrl: string,
  callIds: string[],
  timeoutMs = 10_000,
): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let counts = await receiptCounts(databaseUrl);
  while (Date.now() < deadline && callIds.some((id) => counts.get(id) !== 1)) {
    await new Promise((r) => setTimeout(r, 200));
    counts = await receiptCounts(databaseUrl);
  }
  return counts;
}

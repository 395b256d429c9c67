/**
 * Held answers (issue 31): the resident memory of a `plaza serve` started as `npm start` starts it
 * (`--max-semi-space-size=16`, embedded PGlite, default gateway settings), idle and while 30
 * clients that never read ask for a 24 MB tool answer each — 10 on `/mcp`, 10 on
 * `/mcp/p/<provider>` answered as JSON, 10 there answered as an event stream, each client its own
 * agent. Target: RSS under that load within 400 MB of idle, and `/health` answering throughout.
 *
 * RSS from /proc every 250 ms for BENCH_HELD_S seconds (default 20, inside the default 30 s write
 * timeout, so the answers Plaza keeps are still kept); idle is the median of 8 readings before.
 * Then every client reads what it was sent: a whole answer, an in-band refusal, or a cut connection.
 * The upstream serving the answers runs in this process, not Plaza's.
 *
 * Run: `node --import tsx bench/held-answers.ts [--baseline <git-ref>]`; with a ref, that tree
 * (checked out as bench/ab.ts does) is measured the same way right after this one.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { checkout, median, ROOT, saveResult, startScriptEnv, waitHealthy } from './lib.ts';

const CLIENTS = Number(process.env['BENCH_HELD_CLIENTS'] ?? 30);
const ANSWER_BYTES = Number(process.env['BENCH_HELD_ANSWER_MB'] ?? 24) * 2 ** 20;
const LOAD_S = Number(process.env['BENCH_HELD_S'] ?? 20);
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

function rssMb(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:')) ?? '';
  return Math.round(Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024);
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** The provider: tool `big` answers ANSWER_BYTES of text, as JSON under /json and as one event under /sse. */
async function startProvider(): Promise<{ base: string; server: Server }> {
  const filler = Buffer.alloc(ANSWER_BYTES, 'x');
  const server = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      res.on('error', () => undefined);
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const request = JSON.parse(text) as { id?: number | string; method: string };
      if (request.id === undefined) return void res.writeHead(202).end();
      const sse = req.url?.startsWith('/sse') === true;
      if (request.method === 'tools/call') {
        const head = `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"content":[{"type":"text","text":"`;
        res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
        res.write(sse ? `event: message\ndata: ${head}` : head);
        res.write(filler);
        res.end(sse ? '"}]}}\n\n' : '"}]}}');
        return;
      }
      const result =
        request.method === 'initialize'
          ? {
              protocolVersion: '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'big-answers', version: '1' },
            }
          : request.method === 'tools/list'
            ? { tools: [{ name: 'big', description: 'A large answer.', inputSchema: { type: 'object' } }] }
            : {};
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** `plaza serve` of `tree` as `npm start` runs it, on a fresh data folder. */
async function startPlaza(
  tree: string,
  dataDir: string,
): Promise<{ child: ChildProcess; url: string; env: NodeJS.ProcessEnv }> {
  const port = await freePort();
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? tmpdir(),
    PORT: String(port),
    HOST: '127.0.0.1',
    PLAZA_DATA_DIR: dataDir,
    PLAZA_ALLOW_PRIVATE_TARGETS: '1',
    MCP_REGISTRY_URL: 'off',
    LOG_LEVEL: 'warn',
    // Thirty agents are made in a row; not a memory setting.
    PLAZA_RATE_LIMIT_AGENTS_PER_MIN: '1000',
    // Settings to try other than the defaults (e.g. PLAZA_GATEWAY_HELD_BYTES_TOTAL), passed through.
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('PLAZA_GATEWAY_'))),
  };
  // Node's flags as `npm start` gives them (BENCH_HELD_NODE_ARGS replaces them).
  const nodeArgs = (process.env['BENCH_HELD_NODE_ARGS'] ?? '--max-semi-space-size=16').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, 'bin/plaza.mjs', 'serve'], {
    cwd: tree,
    env: { ...startScriptEnv(tree), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitHealthy(`http://127.0.0.1:${port}/health`, 120_000);
  return { child, url: `http://127.0.0.1:${port}`, env };
}

async function postJson(url: string, key: string | undefined, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  return res.json();
}

async function listHealthy(plazaUrl: string, provider: string, url: string): Promise<void> {
  const { id } = (await postJson(`${plazaUrl}/api/mcp/listings`, undefined, {
    provider,
    url,
    registered_by: 'ops@example.com',
    agin_support: true,
    summary: `Large answers (${provider}).`,
  })) as { id: string };
  for (let i = 0; i < 600; i++) {
    if (
      ((await (await fetch(`${plazaUrl}/api/mcp/endpoints/${id}`)).json()) as { status: string }).status === 'healthy'
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${provider} did not become healthy`);
}

/** A raw client that sends one tools/call and reads nothing until `readAll`. */
function silentClient(
  port: number,
  path: string,
  token: string,
  name: string,
  id: number,
): Promise<{ socket: Socket; readAll(): Promise<number> }> {
  const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      );
      resolve({
        socket,
        // Bytes received until the connection ends, or 10 s without any (a connection kept open).
        readAll: () =>
          new Promise((done) => {
            let size = 0;
            let idle = setTimeout(() => finish(), 10_000);
            const finish = () => {
              clearTimeout(idle);
              socket.destroy();
              done(size);
            };
            socket.on('data', (chunk: Buffer) => {
              size += chunk.length;
              clearTimeout(idle);
              idle = setTimeout(finish, 10_000);
            });
            socket.on('error', () => undefined);
            socket.on('close', finish);
            socket.resume();
          }),
      });
    });
    socket.once('error', reject);
  });
}

/** One tree measured: idle RSS, RSS under the silent clients, /health, and what the clients got. */
async function measure(tree: string, label: string): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plaza-held-'));
  const provider = await startProvider();
  const plaza = await startPlaza(tree, dataDir);
  try {
    const created = await promisify(execFile)(
      process.execPath,
      ['bin/plaza.mjs', 'accounts', 'create', '--email', 'held@example.com'],
      { cwd: tree, env: plaza.env },
    );
    const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const tokens: string[] = [];
    for (let i = 0; i < CLIENTS; i++)
      tokens.push(
        (
          (await postJson(`${plaza.url}/api/agents`, apiKey, { display_name: `Silent ${i}` })) as {
            data: { token: string };
          }
        ).data.token,
      );
    await listHealthy(plaza.url, 'bigjson', `${provider.base}/json/mcp`);
    await listHealthy(plaza.url, 'bigsse', `${provider.base}/sse/mcp`);
    await new Promise((r) => setTimeout(r, 2_000));
    const pid = plaza.child.pid!;
    const idleSamples: number[] = [];
    for (let i = 0; i < 8; i++) {
      idleSamples.push(rssMb(pid));
      await new Promise((r) => setTimeout(r, 250));
    }
    const idle = median(idleSamples);
    const port = Number(new URL(plaza.url).port);
    const targets = [
      { path: '/mcp', name: 'bigjson__big' },
      { path: '/mcp/p/bigjson', name: 'big' },
      { path: '/mcp/p/bigsse', name: 'big' },
    ];
    const clients = await Promise.all(
      tokens.map((token, i) => silentClient(port, targets[i % 3]!.path, token, targets[i % 3]!.name, i + 1)),
    );
    const samples: number[] = [];
    let healthOk = 0;
    let healthAsked = 0;
    const healthMs: number[] = [];
    const ends = Date.now() + LOAD_S * 1000;
    while (Date.now() < ends) {
      samples.push(rssMb(pid));
      if (samples.length % 4 === 0) {
        healthAsked++;
        const started = performance.now();
        const res = await fetch(`${plaza.url}/health`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
        if (res?.status === 200) healthOk++;
        await res?.arrayBuffer();
        healthMs.push(performance.now() - started);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const peak = Math.max(...samples);
    const end = samples.at(-1)!;
    const received = await Promise.all(clients.map((c) => c.readAll()));
    const whole = received.filter((n) => n >= ANSWER_BYTES).length;
    const small = received.filter((n) => n < 64 * 1024).length;
    const row = {
      tree: label,
      idle_rss_mb: idle,
      peak_rss_mb: peak,
      end_rss_mb: end,
      peak_over_idle_mb: peak - idle,
      end_over_idle_mb: end - idle,
      health_ok: `${healthOk}/${healthAsked}`,
      health_p50_ms: Math.round(median(healthMs)),
      answers_whole: whole,
      answers_refused_in_band: small,
      answers_cut: CLIENTS - whole - small,
      answer_mb: mb(ANSWER_BYTES),
      clients: CLIENTS,
    };
    console.log(JSON.stringify(row));
    return row;
  } finally {
    plaza.child.kill('SIGTERM');
    await once(plaza.child, 'exit');
    provider.server.closeAllConnections();
    provider.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The benchmark as `npm run bench -- held-answers` runs it: this tree only. */
export async function benchHeldAnswers(): Promise<Record<string, unknown>> {
  const row = await measure(ROOT, 'this');
  saveResult('held-answers', { rows: [row] });
  return row;
}

if (import.meta.main) {
  const at = process.argv.indexOf('--baseline');
  const ref = at > 0 ? process.argv[at + 1] : undefined;
  const rows = [await measure(ROOT, 'this')];
  if (ref) {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-held-ab-'));
    try {
      rows.push(await measure(checkout(ref, dir), ref));
    } finally {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', join(dir, 'tree')], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
  }
  saveResult('held-answers', { rows });
}

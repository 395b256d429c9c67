/**
 * `plaza mcp connect` relaying one large message from the gateway to its stdout, against a baseline
 * in the same invocation (bench/fixtures/relay-baseline.mjs: fetch, JSON.parse, JSON.stringify, one
 * line to stdout). A small HTTP server here plays the gateway: it answers a tools/call with a result
 * of the size asked, as an event stream (one `data:` line) or as JSON, and pushes a notification of
 * that size on a session's GET stream. Each event is sized so it fits the bridge's default limit
 * (PLAZA_MCP_CONNECT_MAX_EVENT_BYTES, 16 MiB). Per size and path: wall time from the request (or the
 * push) to the whole line on the parent's side, and the child's CPU time (/proc), medians of rounds
 * that alternate bridge and baseline.
 *
 * And the stdin direction: a tools/call line of the size written to the bridge's stdin, timed until
 * the gateway has read the whole POST body (at most 8 MiB: a line is at most 10 MiB); the baseline
 * is the same body POSTed with fetch from this process. A line of a size past 10 MiB is timed to its
 * refusal.
 *
 * Run: `npm run bench -- mcp-bridge`, or `node bench/mcp-bridge.ts [--old <checkout>]`, which also
 * runs the bridge of an older checkout (its bin/plaza.mjs) in the same rounds, e.g. after
 * `mkdir -p /tmp/old && git archive <commit> | tar -x -C /tmp/old && ln -s $PWD/node_modules /tmp/old/`.
 * Env: BENCH_BRIDGE_MIB (1,4,16), BENCH_BRIDGE_ROUNDS (3), BENCH_BRIDGE_NODE_ARGS (flags for the bridges'
 * node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: profiles written when the bridges end).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { cpuSeconds, median, ROOT, saveResult } from './lib.ts';

const MiB = 1024 * 1024;
const SIZES = (process.env['BENCH_BRIDGE_MIB'] ?? '1,4,16').split(',').map(Number);
const ROUNDS = Number(process.env['BENCH_BRIDGE_ROUNDS'] ?? 3);
/** Node flags for the bridges, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env['BENCH_BRIDGE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const TOKEN = `agt_${'a'.repeat(13)}_${'b'.repeat(40)}`;

/** Text of `bytes` ASCII characters JSON writes as they are (no digit runs the bridge marks). */
function filler(bytes: number): string {
  const word = 'lorem ipsum dolor sit amet 12345, ';
  return word.repeat(Math.ceil(bytes / word.length)).slice(0, bytes);
}

/** The gateway the bridge (and the baseline) talk to. */
async function startGateway() {
  const sessions = new Map<string, string>();
  const streams = new Map<string, ServerResponse>();
  const arrived: Array<(bytes: number) => void> = [];
  let next = 0;
  const answer = (res: ServerResponse, type: string, parts: Array<string | Buffer>) => {
    const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
    res.writeHead(200, { 'content-type': type, 'content-length': body.length }).end(body);
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path === '/api/mcp/endpoints') return answer(res, 'application/json', ['{"endpoints":[{"status":"healthy"}]}']);
    const session = req.headers['mcp-session-id'] as string | undefined;
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      if (!session) return void res.writeHead(405).end();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).flushHeaders();
      streams.set(session, res);
      // A comment now and then: the baseline's fetch gives up on a body silent for 300 s.
      const ping = setInterval(() => res.write(': ping\n\n'), 60_000);
      res.on('close', () => clearInterval(ping));
      res.on('close', () => streams.delete(session));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    for (const done of arrived.splice(0)) done(text.length);
    const message = JSON.parse(text) as {
      id?: number;
      method: string;
      params?: {
        clientInfo?: { name: string };
        protocolVersion?: string;
        arguments?: { bytes: number; as: string; sink?: boolean };
      };
    };
    if (message.id === undefined) return void res.writeHead(202).end();
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":`;
    if (message.method === 'initialize') {
      const id = `s${++next}`;
      sessions.set(message.params!.clientInfo!.name, id);
      res.setHeader('mcp-session-id', id);
      return answer(res, 'application/json', [
        `${head}{"protocolVersion":"${message.params!.protocolVersion}","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"bench","version":"1"}}}`,
      ]);
    }
    const args = message.params?.arguments;
    if (message.method !== 'tools/call' || !args || args.sink) return answer(res, 'application/json', [`${head}{}}`]);
    // The event, with its framing, comes to `bytes`.
    const framing = 'event: message\ndata: '.length + `${head}{"content":[{"type":"text","text":""}]}}`.length + 2;
    const parts = [`${head}{"content":[{"type":"text","text":"`, filler(args.bytes - framing), '"}]}}'];
    if (args.as === 'json') return answer(res, 'application/json', parts);
    return answer(res, 'text/event-stream', ['event: message\ndata: ', ...parts, '\n\n']);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sessions,
    streams,
    /** Resolves with the size of the next POST body the gateway reads. */
    nextBody: () => new Promise<number>((done) => arrived.push(done)),
    /** Pushes a notification of `bytes` (with its framing) on the GET stream of `client`'s session. */
    push(client: string, bytes: number) {
      const stream = streams.get(sessions.get(client)!);
      if (!stream) throw new Error(`${client} has no notification stream open`);
      const head =
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"';
      const tail = '"}}\n\n';
      stream.write(Buffer.from(`${head}${filler(bytes - head.length - tail.length)}${tail}`));
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A child relaying to its stdout: how to wait for its next whole line, and its CPU time. */
interface Relay {
  name: string;
  child: ChildProcess;
  /** Resolves with the length of the next line the child writes, once it is whole. */
  nextLine(): Promise<number>;
  cpu(): number;
  write(line: string): void;
  stderr(): string;
  /** Resolves once the child has exited. */
  exited: Promise<unknown>;
}

function relay(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Relay {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let size = 0;
  let err = '';
  const waiting: Array<(length: number) => void> = [];
  // Only the new chunk is searched for the line end: the parent's share is linear, and the same for every child.
  child.stdout!.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      const length = size + end - start;
      size = 0;
      start = end + 1;
      waiting.shift()?.(length);
    }
    size += chunk.length - start;
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`${name} exited (${code ?? signal}): ${err.slice(-2000)}`);
  });
  return {
    name,
    child,
    nextLine: () => new Promise((done) => waiting.push(done)),
    cpu: () => cpuSeconds(child.pid!),
    write: (line) => child.stdin!.write(`${line}\n`),
    stderr: () => err,
    exited: once(child, 'exit'),
  };
}

/** Wall and CPU milliseconds of `trigger` until `r`'s next whole line (of at least `bytes` / 2). */
async function timeLine(r: Relay, bytes: number, trigger: () => void): Promise<{ wall: number; cpu: number }> {
  const line = r.nextLine();
  const cpu0 = r.cpu();
  const t0 = performance.now();
  trigger();
  const length = await Promise.race([line, r.exited.then(() => -1)]);
  const wall = performance.now() - t0;
  if (length < bytes / 2)
    throw new Error(`${r.name} wrote a line of ${length} bytes for ${bytes}: ${r.stderr().slice(-500)}`);
  return { wall, cpu: (r.cpu() - cpu0) * 1000 };
}

/** Runs the benchmark and returns its figures. */
export async function benchMcpBridge(old?: string): Promise<Record<string, unknown>> {
  const loadStart = loadavg()[0]!;
  const gateway = await startGateway();
  const dir = mkdtempSync(join(tmpdir(), 'bench-bridge-'));
  const credentials = join(dir, 'credentials.json');
  writeFileSync(credentials, JSON.stringify({ url: gateway.url, token: TOKEN }));
  const endpoint = `${gateway.url}/mcp/p/bench`;
  const bridges: Array<{ name: string; bin: string }> = [{ name: 'bridge', bin: join(ROOT, 'bin', 'plaza.mjs') }];
  if (old) bridges.push({ name: 'old bridge', bin: resolve(old, 'bin', 'plaza.mjs') });
  const env = { PLAZA_CREDENTIALS_FILE: credentials, LOG_LEVEL: 'warn' };
  const children: Relay[] = [];
  try {
    for (const { name, bin } of bridges) {
      const r = relay(name, process.execPath, [...NODE_ARGS, bin, 'mcp', 'connect', 'bench'], env);
      children.push(r);
      const initialized = r.nextLine();
      r.write(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
        }),
      );
      await Promise.race([
        initialized,
        r.exited.then(() => Promise.reject(new Error(`${name} exited before it answered initialize`))),
      ]);
      r.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    }
    // The baseline's session is opened here; its child keeps the GET stream of it open.
    const init = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'baseline', version: '1' } },
      }),
    });
    await init.text();
    const baseline = relay(
      'baseline',
      process.execPath,
      [join(ROOT, 'bench', 'fixtures', 'relay-baseline.mjs'), endpoint, init.headers.get('mcp-session-id')!],
      {},
    );
    children.unshift(baseline);
    await baseline.nextLine();
    // Every child's notification stream is open before the first push.
    for (let i = 0; i < 500 && gateway.streams.size < children.length; i++) await new Promise((r) => setTimeout(r, 20));
    if (gateway.streams.size < children.length)
      throw new Error(`only ${gateway.streams.size} of ${children.length} notification streams opened`);

    let id = 0;
    const paths: Record<string, (r: Relay, bytes: number) => () => void> = {
      'POST, event stream': (r, bytes) => callFor(r, bytes, 'sse'),
      'POST, JSON': (r, bytes) => callFor(r, bytes, 'json'),
      'GET stream notification': (r, bytes) => () => gateway.push(r === baseline ? 'baseline' : r.name, bytes),
    };
    function callFor(r: Relay, bytes: number, as: string): () => void {
      const message = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'big', arguments: { bytes, as } },
      });
      if (r !== baseline) return () => r.write(message);
      return () =>
        r.write(
          JSON.stringify({
            url: endpoint,
            headers: { 'mcp-session-id': gateway.sessions.get('baseline') },
            body: message,
          }),
        );
    }
    const rows: Record<string, unknown>[] = [];
    for (const mib of SIZES) {
      for (const [path, trigger] of Object.entries(paths)) {
        const times = new Map<string, { wall: number[]; cpu: number[] }>(
          children.map((c) => [c.name, { wall: [], cpu: [] }]),
        );
        for (let round = 0; round < ROUNDS; round++) {
          for (const r of round % 2 ? [...children].reverse() : children) {
            const t = await timeLine(r, mib * MiB, trigger(r, mib * MiB));
            times.get(r.name)!.wall.push(t.wall);
            times.get(r.name)!.cpu.push(t.cpu);
          }
        }
        const row: Record<string, unknown> = { mib, path };
        for (const [name, t] of times) {
          row[`${name}_ms`] = Math.round(median(t.wall));
          row[`${name}_cpu_ms`] = Math.round(median(t.cpu));
        }
        row['bridge_mib_per_s'] = Number(((mib * 1000) / median(times.get('bridge')!.wall)).toFixed(1));
        row['ratio'] = Number((median(times.get('bridge')!.wall) / median(times.get('baseline')!.wall)).toFixed(2));
        if (old)
          row['old_ratio'] = Number(
            (median(times.get('old bridge')!.wall) / median(times.get('baseline')!.wall)).toFixed(2),
          );
        rows.push(row);
        console.log(JSON.stringify(row));
      }
    }
    // The stdin direction: a tools/call line of `mib` MiB, from the bridge's stdin to the gateway's
    // read of the POST body; the baseline is that body POSTed by fetch from this process.
    // (A line is at most 10 MiB, MAX_LINE_BYTES: 8 MiB stands in for 16.)
    for (const mib of [...new Set(SIZES.map((m) => Math.min(m, 8)))]) {
      const argument = filler(mib * MiB - 200);
      const line = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'big', arguments: { sink: true, text: argument } },
      });
      const times = new Map<string, number[]>([
        ['baseline', []],
        ...bridges.map((b): [string, number[]] => [b.name, []]),
      ]);
      for (let round = 0; round < ROUNDS; round++) {
        for (const r of children) {
          const body = gateway.nextBody();
          const answered = r === baseline ? undefined : r.nextLine();
          const t0 = performance.now();
          if (r === baseline)
            void fetch(endpoint, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                'mcp-session-id': gateway.sessions.get('baseline')!,
              },
              body: line,
            }).then((res) => res.text());
          else r.write(line);
          await body;
          times.get(r.name)!.push(performance.now() - t0);
          await answered;
        }
      }
      const row: Record<string, unknown> = { mib, path: 'stdin line to the gateway' };
      for (const [name, t] of times) row[`${name}_ms`] = Math.round(median(t));
      row['ratio'] = Number((median(times.get('bridge')!) / median(times.get('baseline')!)).toFixed(2));
      if (old)
        row['old_ratio'] = Number((median(times.get('old bridge')!) / median(times.get('baseline')!)).toFixed(2));
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    // A line past the 10 MiB limit: read to its end and refused (answered with an error), not sent.
    for (const mib of SIZES.filter((m) => m > 10)) {
      const line = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'big', arguments: { sink: true, text: filler(mib * MiB) } },
      });
      const row: Record<string, unknown> = { mib, path: 'stdin line past the limit, refused' };
      for (const r of children.filter((c) => c !== baseline)) {
        const times: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const answered = r.nextLine();
          const t0 = performance.now();
          r.write(line);
          await answered;
          times.push(performance.now() - t0);
        }
        row[`${r.name}_ms`] = Math.round(median(times));
      }
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    const figures = {
      rounds: ROUNDS,
      load_start: Number(loadStart.toFixed(2)),
      load_end: Number(loadavg()[0]!.toFixed(2)),
      rows,
    };
    saveResult('mcp-bridge', figures);
    return figures;
  } finally {
    // A bridge ends when its client closes stdin (and writes its CPU profile then, under --cpu-prof).
    await Promise.all(
      children.map(async (c) => {
        if (c.child.exitCode !== null || c.child.signalCode !== null) return;
        c.child.stdin!.end();
        const timer = setTimeout(() => c.child.kill(), 5_000);
        await c.exited;
        clearTimeout(timer);
      }),
    );
    gateway.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf('--old');
  await benchMcpBridge(at > 0 ? process.argv[at + 1] : undefined);
  process.exit(0);
}

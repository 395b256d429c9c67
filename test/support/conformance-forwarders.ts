/**
 * Forwarders the conformance runner puts in front of Plaza (the suite cannot send headers, and it
 * knows only the target's own tool names):
 * - `startForwarder(target, { headers })` adds the agent's `Authorization` and streams both ways,
 *   unbuffered (SSE and long-lived GETs pass as they come); `Host` and `Origin` pass unchanged, so
 *   the DNS-rebinding scenario reaches Plaza as the suite sent it;
 * - with `mapping`, it also rewrites JSON-RPC bodies for `/mcp`: the suite's names become
 *   `<provider>__<name>` (body and `Mcp-Name`), resource URIs become the ones `/mcp` lists, and
 *   answers are mapped back (lists keep only that provider's entries). The mapping is the test's
 *   device to run an unmodified suite against an aggregate, not part of Plaza.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

/** How names and URIs of one provider look on `/mcp`. */
export interface AggregateMapping {
  toAggregateName(name: string): string;
  fromAggregateName(name: string): string | undefined;
  toAggregateUri(uri: string): string;
  fromAggregateUri(uri: string): string | undefined;
}

/** Names `<provider>__<name>`; URIs as learned from `/mcp`'s resources/list (see learnUriMapping), else unchanged. */
export function aggregateMapping(
  provider: string,
  uris?: { prefix: string; suffix: string; encode: boolean },
): AggregateMapping {
  const prefix = `${provider}__`;
  return {
    toAggregateName: (name) => prefix + name,
    fromAggregateName: (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : undefined),
    toAggregateUri: (uri) => (uris ? uris.prefix + (uris.encode ? encodeURIComponent(uri) : uri) + uris.suffix : uri),
    fromAggregateUri: (uri) => {
      if (!uris) return uri;
      if (
        !uri.startsWith(uris.prefix) ||
        !uri.endsWith(uris.suffix) ||
        uri.length < uris.prefix.length + uris.suffix.length
      )
        return undefined;
      const inner = uri.slice(uris.prefix.length, uri.length - uris.suffix.length);
      return uris.encode ? decodeURIComponent(inner) : inner;
    },
  };
}

/**
 * Finds how `/mcp` writes the upstream's resource URIs: the first listed URI that contains one of
 * `upstreamUris` (as is or percent-encoded) gives the prefix and suffix around it.
 */
export function learnUriMapping(listed: string[], upstreamUris: string[]) {
  for (const outer of listed)
    for (const inner of upstreamUris)
      for (const encode of [false, true]) {
        const needle = encode ? encodeURIComponent(inner) : inner;
        const at = outer.indexOf(needle);
        if (at >= 0 && outer !== inner)
          return { prefix: outer.slice(0, at), suffix: outer.slice(at + needle.length), encode };
      }
  return undefined;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function mapRequest(message: Json, m: AggregateMapping): void {
  const params = message['params'];
  if (!isObject(params)) return;
  const method = message['method'];
  if ((method === 'tools/call' || method === 'prompts/get') && typeof params['name'] === 'string')
    params['name'] = m.toAggregateName(params['name']);
  if (typeof method === 'string' && method.startsWith('resources/') && typeof params['uri'] === 'string')
    params['uri'] = m.toAggregateUri(params['uri']);
  const ref = params['ref'];
  if (method === 'completion/complete' && isObject(ref)) {
    if (typeof ref['name'] === 'string') ref['name'] = m.toAggregateName(ref['name']);
    if (typeof ref['uri'] === 'string') ref['uri'] = m.toAggregateUri(ref['uri']);
  }
}

/** Maps an answer back: lists keep this provider's entries, and every name and URI reads as upstream's. */
function mapAnswer(value: unknown, m: AggregateMapping): unknown {
  if (typeof value === 'string') return m.fromAggregateName(value) ?? m.fromAggregateUri(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => mapAnswer(v, m));
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    if ((key === 'tools' || key === 'prompts') && Array.isArray(v))
      out[key] = v
        .filter((e) => isObject(e) && typeof e['name'] === 'string' && m.fromAggregateName(e['name']) !== undefined)
        .map((e) => mapAnswer(e, m));
    else if ((key === 'resources' || key === 'resourceTemplates') && Array.isArray(v))
      out[key] = v
        .filter((e) => isObject(e) && m.fromAggregateUri(String(e['uri'] ?? e['uriTemplate'])) !== undefined)
        .map((e) => mapAnswer(e, m));
    else out[key] = mapAnswer(v, m);
  }
  return out;
}

function rewriteRequestBody(raw: string, headers: IncomingHttpHeaders, m: AggregateMapping): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages) {
    if (!isObject(message)) continue;
    const name = headers['mcp-name'];
    // The header names what the body names: mapped the same way, so a mismatch stays a mismatch.
    if (typeof name === 'string' && typeof message['method'] === 'string')
      headers['mcp-name'] = message['method'].startsWith('resources/')
        ? m.toAggregateUri(name.trim())
        : m.toAggregateName(name.trim());
    mapRequest(message, m);
  }
  return JSON.stringify(parsed);
}

/** Rewrites each `data:` line of an SSE stream (and a whole JSON body at its end). */
function answerRewriter(m: AggregateMapping, json: boolean): Transform {
  let pending = '';
  const mapLine = (line: string) => {
    if (!line.startsWith('data:')) return line;
    try {
      return `data: ${JSON.stringify(mapAnswer(JSON.parse(line.slice(5)), m))}`;
    } catch {
      return line;
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      if (json) return done();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      done(null, lines.map((l) => mapLine(l.replace(/\r$/, ''))).join('\n') + (lines.length ? '\n' : ''));
    },
    flush(done) {
      if (!json) return done(null, mapLine(pending));
      try {
        done(null, JSON.stringify(mapAnswer(JSON.parse(pending), m)));
      } catch {
        done(null, pending);
      }
    },
  });
}

/** A running forwarder. */
export interface Forwarder {
  url: string;
  close(): Promise<void>;
}

/** Forwards every request to `target` (one URL), adding `headers`; with `mapping`, rewrites as described above. */
export async function startForwarder(
  target: string,
  options: { headers: Record<string, string>; mapping?: AggregateMapping },
): Promise<Forwarder> {
  const upstream = new URL(target);
  const server = createServer(async (req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, ...options.headers };
    let body: Buffer | undefined;
    if (options.mapping && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = Buffer.from(rewriteRequestBody(Buffer.concat(chunks).toString('utf8'), headers, options.mapping));
      headers['content-length'] = String(body.length);
    }
    const out = httpRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname + upstream.search,
        method: req.method,
        headers,
      },
      (answer) => {
        const type = String(answer.headers['content-type'] ?? '');
        const rewrite = options.mapping && (type.includes('json') || type.includes('event-stream'));
        const outHeaders = { ...answer.headers };
        if (rewrite) delete outHeaders['content-length'];
        res.writeHead(answer.statusCode ?? 502, outHeaders);
        res.flushHeaders();
        (rewrite ? answer.pipe(answerRewriter(options.mapping!, type.includes('json'))) : answer).pipe(res);
      },
    );
    out.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => out.destroy());
    if (body) out.end(body);
    else req.pipe(out);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

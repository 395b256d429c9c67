import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';

import type { FetchLike } from './guarded-fetch.ts';
import { SsrfError } from './ssrf.ts';

/** A tool as Plaza keeps it: what the provider published, with `annotations.platform` intact. */
export interface ProbedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
  /** `annotations.platform.requires_agin` (spec §2.3). */
  requiresAgin: boolean;
  /** `annotations.platform.caller_identity` (spec §2.3). */
  callerIdentity: string | null;
}

/** What one probe saw. `ok` means initialize and every tools/list page succeeded. */
export interface ProbeOutcome {
  ok: boolean;
  latencyMs: number;
  protocolVersion: string | null;
  serverInfo: Record<string, unknown> | null;
  tools: ProbedTool[];
  /** Why the probe failed, for the probe record and the listing (never an upstream body). */
  error: string | null;
}

/** Limits of one probe. */
export interface ProbeLimits {
  /** Whole probe: initialize + every page, in ms. */
  timeoutMs: number;
  /** Pages of tools/list followed at most. */
  maxPages: number;
  /** Tools kept at most. */
  maxTools: number;
  /** Aborts the probe early (shutdown). */
  signal?: AbortSignal;
}

// Loose on purpose: the SDK's own ListToolsResult schema strips unknown keys, and with them the
// provider's `annotations.platform` (DESIGN.md, "Pitfall").
const ToolsPageSchema = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

const RawToolSchema = z.looseObject({
  name: z.string().min(1).max(256),
  description: z.string().optional(),
  inputSchema: z.looseObject({}).optional(),
  annotations: z.looseObject({}).optional(),
});

const MAX_DESCRIPTION = 8_000;

/** Normalises one published tool; undefined when it is not a tool at all. */
export function normaliseTool(raw: unknown): ProbedTool | undefined {
  const parsed = RawToolSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const annotations = (parsed.data.annotations ?? {}) as Record<string, unknown>;
  const platform = annotations['platform'];
  const platformObject = platform !== null && typeof platform === 'object' ? (platform as Record<string, unknown>) : {};
  const callerIdentity = platformObject['caller_identity'];
  return {
    name: parsed.data.name,
    description: (parsed.data.description ?? '').slice(0, MAX_DESCRIPTION),
    inputSchema: (parsed.data.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
    annotations,
    requiresAgin: platformObject['requires_agin'] === true,
    callerIdentity: typeof callerIdentity === 'string' ? callerIdentity.slice(0, 1_000) : null,
  };
}

// One validator for every probe: a Client otherwise builds its own Ajv instance (hundreds of KB,
// and the bulk of a probe round's garbage), though probes never validate tool outputs.
let sharedValidator: AjvJsonSchemaValidator | undefined;

/** A short, caller-safe description of why a probe failed. */
export function describeProbeError(error: unknown): string {
  if (error instanceof SsrfError) return error.message;
  const name = error instanceof Error ? error.name : 'Error';
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  let message = error instanceof Error ? error.message : String(error);
  // fetch failures hide the reason (ECONNREFUSED, ENOTFOUND…) in their cause chain.
  for (let e: unknown = error instanceof Error ? error.cause : undefined, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof SsrfError) return e.message;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      message = `${message} (${code})`;
      break;
    }
  }
  // Keep the first line only: upstream bodies can ride along in transport errors.
  return `${name}: ${message.split('\n')[0]!.slice(0, 200)}`;
}

/**
 * Probes one MCP endpoint over streamable HTTP: initialize, then tools/list following
 * `nextCursor` over every page. Never throws; a failure is an outcome with `ok: false`.
 */
export async function probeEndpoint(url: string, fetch: FetchLike, limits: ProbeLimits, now: () => number): Promise<ProbeOutcome> {
  const started = now();
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const abort = limits.signal ? AbortSignal.any([timeout, limits.signal]) : timeout;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    // Every request of the transport carries the probe's deadline.
    fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, abort]) : abort }),
    redirectPolicy: 'follow',
  });
  const client = new Client({ name: 'plaza-prober', version: '1.0.0' }, { capabilities: {}, jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()) });
  const requestOptions = { signal: abort, timeout: limits.timeoutMs, maxTotalTimeout: limits.timeoutMs };
  try {
    await client.connect(transport, requestOptions);
    const tools: ProbedTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < limits.maxPages; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ToolsPageSchema, requestOptions);
      for (const raw of result.tools) {
        const tool = normaliseTool(raw);
        if (tool && !seen.has(tool.name) && tools.length < limits.maxTools) {
          seen.add(tool.name);
          tools.push(tool);
        }
      }
      cursor = result.nextCursor;
      if (cursor === undefined || cursor === '') break;
    }
    const info = client.getServerVersion();
    return {
      ok: true,
      latencyMs: now() - started,
      protocolVersion: transport.protocolVersion ?? null,
      serverInfo: info ? { name: info.name, version: info.version, ...(info.title ? { title: info.title } : {}) } : null,
      tools,
      error: null,
    };
  } catch (error) {
    return { ok: false, latencyMs: now() - started, protocolVersion: null, serverInfo: null, tools: [], error: describeProbeError(error) };
  } finally {
    // Let the server drop its session; a server that cannot is not our failure.
    if (transport.sessionId !== undefined) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

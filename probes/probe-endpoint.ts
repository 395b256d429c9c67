import { ToolAnnotationsSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { nestsDeeperThan, storableJson, storableText } from '../src/kernel/index.ts';
import type { GuardedRequest } from './guarded-request.ts';
import { discover, fallsBack, type Handshake, initialize, newestFirst } from './internal/handshake.ts';
import { createProbeSession, ProbeProtocolError, type ProbeSession } from './internal/streamable-http.ts';
import { keptIcons, keptMeta } from './internal/tool-icons.ts';
import { SsrfError } from './ssrf.ts';
import type { ToolIcon } from './tool-icon.ts';

/** A tool as Plaza keeps it: what the provider published, with `annotations.platform` intact. */
export interface ProbedTool {
  name: string;
  /** MCP's display name of the tool, or null when it published none. */
  title: string | null;
  description: string;
  inputSchema: Record<string, unknown>;
  /** MCP's `outputSchema`: the JSON Schema a call's `structuredContent` follows; null when none. */
  outputSchema: Record<string, unknown> | null;
  annotations: Record<string, unknown>;
  /** MCP's `execution` (`taskSupport`: whether calls may, or must, run as tasks); null when none. */
  execution: Record<string, unknown> | null;
  /** MCP's `icons` Plaza keeps (safe sources, bounded; see keptIcons); null when none. */
  icons: ToolIcon[] | null;
  /** MCP's `_meta` of the tool (an object, bounded); null when none or not kept. */
  meta: Record<string, unknown> | null;
  /** `annotations.platform.requires_agin` (spec §2.3). */
  requiresAgin: boolean;
  /** `annotations.platform.caller_identity` (spec §2.3). */
  callerIdentity: string | null;
}

/** What one probe saw. `ok` means a handshake (server/discover or initialize) and every tools/list page succeeded. */
export interface ProbeOutcome {
  ok: boolean;
  latencyMs: number;
  /** The revision the probe spoke (2026-07-28 after server/discover, else what initialize negotiated). */
  protocolVersion: string | null;
  /**
   * The MCP revisions the server offers, newest first: server/discover's list, and the revision
   * initialize negotiated when the server answers it too. Empty when the probe failed.
   */
  revisions: string[];
  /** The server's capabilities (server/discover's when it answered, else initialize's); null when the probe failed. */
  capabilities: Record<string, unknown> | null;
  serverInfo: Record<string, unknown> | null;
  tools: ProbedTool[];
  /** Why the probe failed, for the probe record and the listing (never an upstream body). */
  error: string | null;
  /** What `error` leaves out, for the server's log only: the refused address a host name resolved to. */
  logDetail?: string;
  /** The endpoint answered HTTP 401 with a Bearer challenge: it needs a caller's own token (the probe sends none). */
  authRequired?: boolean;
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
const MAX_TITLE = 1_000;
/** Deepest nesting of a tool's JSON (schema and annotations) kept; JSON Schemas rarely pass 20. */
const MAX_TOOL_DEPTH = 64;

/**
 * `value` made storable when the MCP SDK's `schema` for it accepts it; null when it is absent or
 * not what MCP allows. /mcp lists every provider's tools in one tools/list, and a client that
 * checks the result (the SDK's does) refuses the whole list for one tool's odd value.
 */
function mcpShaped(
  schema: { safeParse(value: unknown): { success: boolean } },
  value: unknown,
): Record<string, unknown> | null {
  return value !== undefined && schema.safeParse(value).success
    ? (storableJson(value) as Record<string, unknown>)
    : null;
}

/** A published tool the catalog leaves out, named so the probe can say so. */
export interface LeftOutTool {
  leftOut: string;
}

/**
 * Normalises one published tool; undefined when it is not a tool at all, or not one Plaza can
 * store and route: a name holding NUL or a lone surrogate, JSON nested deeper than MAX_TOOL_DEPTH.
 * A tool whose inputSchema is not an object schema in MCP's shape (the SDK's ToolSchema; a
 * missing `type` reads as "object", as /mcp serves it) is left out, named; annotations not in
 * MCP's shape are dropped (`annotations.platform` is read from them all the same), and so are
 * icons and `_meta` Plaza does not keep (keptIcons, keptMeta), the tool kept. Other text is
 * made storable (storableText), so one odd byte cannot fail the probe's write.
 */
export function normaliseTool(raw: unknown): ProbedTool | LeftOutTool | undefined {
  if (nestsDeeperThan(raw, MAX_TOOL_DEPTH)) return undefined;
  const parsed = RawToolSchema.safeParse(raw);
  if (!parsed.success || storableText(parsed.data.name) !== parsed.data.name) return undefined;
  const inputSchema = { type: 'object', ...parsed.data.inputSchema };
  if (!ToolSchema.shape.inputSchema.safeParse(inputSchema).success) return { leftOut: parsed.data.name };
  const published = storableJson(parsed.data.annotations ?? {}) as Record<string, unknown>;
  const annotations = ToolAnnotationsSchema.safeParse(published).success ? published : {};
  const platform = published['platform'];
  const platformObject = platform !== null && typeof platform === 'object' ? (platform as Record<string, unknown>) : {};
  const callerIdentity = platformObject['caller_identity'];
  const title = parsed.data['title'];
  return {
    name: parsed.data.name,
    title: typeof title === 'string' ? storableText(title.slice(0, MAX_TITLE)) : null,
    description: storableText((parsed.data.description ?? '').slice(0, MAX_DESCRIPTION)),
    inputSchema: storableJson(parsed.data.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
    outputSchema: mcpShaped(ToolSchema.shape.outputSchema, parsed.data['outputSchema']),
    annotations,
    execution: mcpShaped(ToolSchema.shape.execution, parsed.data['execution']),
    icons: keptIcons(parsed.data['icons']),
    meta: keptMeta(parsed.data['_meta']),
    requiresAgin: platformObject['requires_agin'] === true,
    callerIdentity: typeof callerIdentity === 'string' ? storableText(callerIdentity.slice(0, 1_000)) : null,
  };
}

/**
 * The note an ok probe keeps in its `error` when it left tools out: one tool with a bad input
 * schema would otherwise make SDK clients refuse /mcp's whole tools/list.
 */
function leftOutNote(names: string[]): string {
  const named = names
    .slice(0, 5)
    .map((n) => JSON.stringify(n.slice(0, 100)))
    .join(', ');
  const more = names.length > 5 ? ` and ${names.length - 5} more` : '';
  return storableText(
    `Left out ${names.length} tool${names.length === 1 ? '' : 's'} whose inputSchema is not an object schema: ${named}${more}.`,
  );
}

/** A short, caller-safe description of why a probe failed (storable: upstream text can ride along). */
export function describeProbeError(error: unknown): string {
  return storableText(probeErrorText(error));
}

function findSsrfError(error: unknown): SsrfError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof SsrfError) return e;
  return undefined;
}

function probeErrorText(error: unknown): string {
  if (error instanceof SsrfError) return error.message;
  const name = error instanceof Error ? error.name : 'Error';
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  let message = error instanceof Error ? error.message : String(error);
  // The reason (ECONNREFUSED, ENOTFOUND…) is an error code, on the error or down its cause chain.
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SsrfError) return e.message;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (!message.includes(code)) message = `${message} (${code})`;
      break;
    }
  }
  // Keep the first line only: upstream bodies can ride along in transport errors.
  return `${name}: ${message.split('\n')[0]!.slice(0, 200)}`;
}

/** The probe record's error for an endpoint that asks for credentials. */
const AUTH_REQUIRED =
  'The endpoint needs credentials (HTTP 401): callers send their own through the gateway as X-PLATFORM-Upstream-Authorization.';

/** The outcome of a probe that failed, with `error` and what goes with it. */
function failed(latencyMs: number, fields: Pick<ProbeOutcome, 'error'> & Partial<ProbeOutcome>): ProbeOutcome {
  return {
    ok: false,
    latencyMs,
    protocolVersion: null,
    revisions: [],
    capabilities: null,
    serverInfo: null,
    tools: [],
    ...fields,
  };
}

/** Reads every tools/list page (following `nextCursor`) up to the limits; the tools kept and those left out. */
async function listTools(
  session: ProbeSession,
  limits: ProbeLimits,
): Promise<{ tools: ProbedTool[]; leftOut: string[] }> {
  const tools: ProbedTool[] = [];
  const seen = new Set<string>();
  const leftOut: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < limits.maxPages; page++) {
    const result = await session.request('tools/list', cursor === undefined ? {} : { cursor }, ToolsPageSchema);
    for (const raw of result.tools) {
      const tool = normaliseTool(raw);
      if (tool && 'leftOut' in tool) leftOut.push(tool.leftOut);
      else if (tool && !seen.has(tool.name) && tools.length < limits.maxTools) {
        seen.add(tool.name);
        tools.push(tool);
      }
    }
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') break;
  }
  return { tools, leftOut };
}

/**
 * Whether a server that answered server/discover also answers initialize, and with which revision:
 * undefined when it refuses (a 2026-only server), so the catalog lists only what the server offers.
 * Failures that say nothing of the revision (no answer, the host's budget spent) fail the probe.
 */
async function sessionRevision(open: () => ProbeSession): Promise<string | undefined> {
  const session = open();
  try {
    return (await initialize(session)).protocolVersion;
  } catch (error) {
    if (fallsBack(error)) return undefined;
    throw error;
  } finally {
    await session.terminate().catch(() => undefined);
  }
}

/**
 * Probes one MCP endpoint over streamable HTTP in the revision it speaks: `server/discover` in
 * 2026-07-28 first (stateless: `_meta` and MCP headers on every request), then tools/list over
 * every page, then `initialize` once to learn whether it serves the earlier revisions too. When
 * server/discover gets an answer that is not one (an error, a 4xx or 5xx status, a result not in
 * its shape or offering no revision the probe speaks), the probe falls back to the handshake
 * before 2026-07-28: initialize (version negotiated as the SDK's client does), the initialized
 * notification, tools/list over every page, then DELETE of the session. Never throws; a failure
 * is an outcome with `ok: false`.
 */
export async function probeEndpoint(
  url: string,
  send: GuardedRequest,
  limits: ProbeLimits,
  now: () => number,
): Promise<ProbeOutcome> {
  const started = now();
  // One controller and one timer per probe rather than AbortSignal.timeout + any per request: a
  // timeout signal with listeners stays reachable until it fires, and a round makes thousands.
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException(`Probe timed out after ${limits.timeoutMs} ms.`, 'TimeoutError')),
    limits.timeoutMs,
  );
  const onAbort = () => deadline.abort(limits.signal?.reason);
  if (limits.signal?.aborted) onAbort();
  else limits.signal?.addEventListener('abort', onAbort, { once: true });
  const open = () => createProbeSession(url, send, deadline.signal);
  // Each revision on a session of its own: nothing a stateless answer set leaks into the fallback.
  let session = open();
  try {
    let handshake: Handshake;
    let stateless = true;
    try {
      handshake = await discover(session);
    } catch (error) {
      if (!fallsBack(error)) throw error;
      stateless = false;
      await session.terminate().catch(() => undefined);
      session = open();
      handshake = await initialize(session);
      await session.notify('notifications/initialized');
    }
    const { tools, leftOut } = await listTools(session, limits);
    const older = stateless ? await sessionRevision(open) : undefined;
    return {
      ok: true,
      latencyMs: now() - started,
      protocolVersion: handshake.protocolVersion,
      revisions: newestFirst(older === undefined ? handshake.revisions : [...handshake.revisions, older]),
      capabilities: handshake.capabilities,
      serverInfo: handshake.serverInfo,
      tools,
      error: leftOut.length === 0 ? null : leftOutNote(leftOut),
    };
  } catch (error) {
    if (error instanceof ProbeProtocolError && error.bearerChallenge)
      return failed(now() - started, { error: AUTH_REQUIRED, authRequired: true });
    const refused = findSsrfError(error);
    return failed(now() - started, {
      error: describeProbeError(error),
      ...(refused?.address ? { logDetail: `resolved to ${refused.address}` } : {}),
    });
  } finally {
    // Let the server drop its session; a server that cannot is not our failure.
    await session.terminate().catch(() => undefined);
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', onAbort);
  }
}

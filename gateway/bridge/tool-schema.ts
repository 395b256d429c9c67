/**
 * A 2026-only provider's input schema of one tool, for the `Mcp-Param-*` headers its calls need
 * (see upstream/param-headers): read from its tools/list when a call was refused for a missing one,
 * and kept a minute per provider and tool.
 */
import type { PooledCall } from '../upstream/pooled-call.ts';
import type { UpstreamPool } from '../upstream-pool.ts';

/** Pages of tools/list read at most to find one tool. */
const MAX_PAGES = 20;
const KEEP_MS = 60_000;
const MAX_KEPT = 1_000;
const kept = new Map<string, { until: number; schema: Record<string, unknown> | undefined }>();

/** Whether an answer refuses a tools/call for a missing or wrong `Mcp-Param-*` header (-32020). */
export function refusesParamHeaders(response: { error?: { code: number; message: string } }): boolean {
  return response.error?.code === -32020 && response.error.message.includes('Mcp-Param-');
}

/** The schema of `tool` at `url` read lately (see toolSchema), if any: a call sends its headers at once. */
export function keptToolSchema(url: string, tool: string): Record<string, unknown> | undefined {
  const hit = kept.get(`${url}\n${tool}`);
  return hit && hit.until > Date.now() ? hit.schema : undefined;
}

/** The input schema `tool` has on the provider `call` goes to (undefined when it is not listed). */
export async function toolSchema(
  pool: UpstreamPool,
  call: Omit<PooledCall, 'method' | 'params'>,
  tool: string,
): Promise<Record<string, unknown> | undefined> {
  const key = `${call.url}\n${tool}`;
  const hit = kept.get(key);
  if (hit && hit.until > Date.now()) return hit.schema;
  let cursor: unknown;
  let schema: Record<string, unknown> | undefined;
  for (let page = 0; page < MAX_PAGES && schema === undefined; page++) {
    const response = await pool.request({
      ...call,
      method: 'tools/list',
      params: cursor === undefined ? {} : { cursor },
    });
    const result = (response.result ?? {}) as { tools?: unknown; nextCursor?: unknown };
    const found = Array.isArray(result.tools)
      ? (result.tools as { name?: unknown; inputSchema?: unknown }[]).find((t) => t?.name === tool)
      : undefined;
    if (found && typeof found.inputSchema === 'object' && found.inputSchema !== null)
      schema = found.inputSchema as Record<string, unknown>;
    cursor = result.nextCursor;
    if (typeof cursor !== 'string') break;
  }
  if (kept.size >= MAX_KEPT) kept.clear();
  kept.set(key, { until: Date.now() + KEEP_MS, schema });
  return schema;
}

/**
 * Pages of `/mcp`'s lists (tools, resources, resource templates, prompts): MCP's cursor-based
 * pagination, so that a catalog of thousands of tools is not one answer of megabytes. The cursor
 * is opaque to the client and keeps no state on any instance: the list's method and the offset of
 * the page, base64url-encoded. Each page is cut from the list as it stands when it is asked for
 * (the catalog and the gathered lists are reused for a few seconds), so a list that changes between
 * pages may show an item twice or skip one; a client told the list changed lists again from the
 * start. A cursor that does not decode, names another list or points past the end is `-32602`.
 */
import { INVALID_PARAMS, rpcFailure } from './scope.ts';

/** Items per page unless the aggregate is told otherwise. */
export const DEFAULT_LIST_PAGE_SIZE = 500;

/** Longest cursor read (one Plaza made is far shorter). */
const MAX_CURSOR_LENGTH = 200;

function cursorFor(method: string, offset: number): string {
  return Buffer.from(JSON.stringify({ m: method, o: offset })).toString('base64url');
}

/** The offset a request's cursor names for `method`: 0 without one; throws -32602 for one that does not decode. */
function offsetOf(params: Record<string, unknown>, method: string, size: number): number {
  const cursor = params['cursor'];
  if (cursor === undefined) return 0;
  const invalid = () => rpcFailure(INVALID_PARAMS, `Invalid cursor for ${method}: list again without one.`);
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { m, o } = (decoded ?? {}) as { m?: unknown; o?: unknown };
  if (m !== method || typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0 || o > size) throw invalid();
  return o;
}

/** The page of `items` the request asks for, and the cursor of the next one when there is one. */
export function pageOf<T>(
  items: readonly T[],
  params: Record<string, unknown>,
  method: string,
  pageSize: number,
): { page: T[]; nextCursor?: string } {
  const offset = offsetOf(params, method, items.length);
  const end = offset + pageSize;
  const page = items.slice(offset, end);
  return end < items.length ? { page, nextCursor: cursorFor(method, end) } : { page };
}

/** How a value goes in an MCP header (`Mcp-Name`, `Mcp-Param-*`) in revision 2026-07-28. */

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';

/**
 * A value as an HTTP field value, as the spec has `Mcp-Name` carry it: plain when it is printable
 * ASCII with no surrounding space (and does not itself look like the sentinel), else the UTF-8
 * bytes in base64 between `=?base64?` and `?=`.
 */
export function headerValue(value: string): string {
  const plain =
    value.length > 0 &&
    /^[\x20-\x7e\t]*$/.test(value) &&
    value.trim() === value &&
    !(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END));
  return plain ? value : `${SENTINEL_START}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_END}`;
}

/**
 * The key a known user's source registrations are counted under, in the `sources` limiter that
 * both `POST /api/agpk/sources/tool` and the `agpk.source.register` MCP tool use: one budget per
 * account, whichever way it registers. (Client addresses are counted in the same limiter under the
 * address itself, which never starts with `account:`.)
 */
export function registrationLimitKey(accountId: string): string {
  return `account:${accountId}`;
}

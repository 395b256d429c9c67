import { unreachable } from './fetch-errors.ts';

/** Endpoint states whose tools are online, on `/mcp` too (as src/connectors has them). */
const ONLINE = new Set(['healthy', 'degraded']);

/** What the bridge asks the catalog about: the provider, and how it reaches it. */
export interface ProviderCheck {
  /** Plaza's base URL. */
  base: string;
  provider: string;
  /**
   * `endpoint`: bridged to `/mcp/p/<provider>`, which also routes a provider that answers only
   * callers with a credential of their own (`auth_required`). `credential`: the provider a
   * `--all` bridge sends a third-party credential to, which `/mcp` calls only while it is online.
   */
  via: 'endpoint' | 'credential';
  /** The environment variable holding the caller's credential for the provider, if any. */
  credentialEnv?: string;
  timeoutMs?: number;
}

/**
 * Asks Plaza's public catalog (`GET /api/mcp/endpoints?provider=…`) whether the provider a bridge
 * is started for is listed and online: the line to warn with when it is not, a line saying the
 * check could not be made (Plaza not reachable yet), or undefined when all is well. Never throws:
 * a bridge starts whatever the answer, as Plaza may come up, or the provider online, later.
 */
export async function providerWarning(check: ProviderCheck): Promise<string | undefined> {
  const { base, provider, via } = check;
  const url = `${base}/api/mcp/endpoints?provider=${encodeURIComponent(provider)}&limit=200`;
  let statuses: string[];
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(check.timeoutMs ?? 5_000) }).catch((error: unknown) => {
      throw unreachable(url, error);
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`GET /api/mcp/endpoints answered HTTP ${res.status}`);
    }
    const body = (await res.json()) as { endpoints?: Array<{ status?: unknown }> };
    if (!Array.isArray(body.endpoints)) throw new Error('GET /api/mcp/endpoints answered without a list of endpoints');
    statuses = body.endpoints.map((e) => String(e.status));
  } catch (error) {
    return `could not check provider "${provider}" with ${base} (${(error as Error).message}); starting anyway`;
  }
  const subject = via === 'credential' ? `--upstream-provider ${provider}: ` : '';
  const outcome =
    via === 'credential'
      ? `the credential in ${check.credentialEnv} goes to no provider`
      : 'every request through this bridge fails';
  if (statuses.length === 0) {
    // Plaza's own provider is served by the gateway itself, never listed. (Loaded only here: the
    // marketplace module takes a good half second to load, for one name.)
    const { RESERVED_PROVIDERS } = await import('../marketplace/index.ts');
    if (RESERVED_PROVIDERS.has(provider)) return undefined;
    return `warning: ${subject}no provider "${provider}" is listed on ${base}: ${outcome} until one is (GET ${base}/api/mcp/endpoints lists them)`;
  }
  if (statuses.some((s) => ONLINE.has(s))) return undefined;
  if (statuses.includes('auth_required')) {
    if (via === 'credential') {
      return `warning: ${subject}provider "${provider}" answers only callers with a credential of their own, so its tools are not on /mcp and ${outcome}: bridge to it alone (plaza mcp connect ${provider} --upstream-token-env ${check.credentialEnv})`;
    }
    if (check.credentialEnv === undefined)
      return `warning: provider "${provider}" answers only callers with a credential of their own: pass --upstream-token-env <NAME>, the variable holding yours`;
    return undefined;
  }
  return `warning: ${subject}provider "${provider}" is listed on ${base} but not online (${[...new Set(statuses)].join(', ')}): ${outcome} until Plaza's probe finds it up`;
}

import type { GatewayEndpoint } from '../../gateway/index.ts';
import { PROVIDER_SLUG } from '../marketplace/index.ts';

/** The one scope a gateway access token needs: calling the gateway as the agent the grant names. */
export const MCP_SCOPE = 'mcp';

/**
 * The resource identifiers (RFC 8707) of the gateway's endpoints under `base` (PUBLIC_BASE_URL),
 * and the way back from one to its endpoint. Identifiers are exact: the URL a client connects to,
 * without a trailing slash, query or fragment.
 */
export interface GatewayResources {
  /** `…/mcp` or `…/mcp/p/<provider>`. */
  resourceOf(target: GatewayEndpoint): string;
  /** The endpoint a resource identifier names; undefined for anything else (another host, path, a query). */
  targetOf(resource: string): GatewayEndpoint | undefined;
  /** Where the resource's Protected Resource Metadata is (RFC 9728 §3.1: the well-known segment before the path). */
  metadataUrlOf(target: GatewayEndpoint): string;
}

/** Creates the mapping for the public base URL `base`. */
export function createGatewayResources(base: string): GatewayResources {
  const origin = base.replace(/\/+$/, '');
  const root = new URL(origin);
  const prefix = root.pathname === '/' ? '' : root.pathname;
  const path = (target: GatewayEndpoint) =>
    `${prefix}/mcp${target.provider === undefined ? '' : `/p/${target.provider}`}`;
  return {
    resourceOf: (target) => `${root.origin}${path(target)}`,
    targetOf(resource) {
      if (!resource.startsWith(`${root.origin}${prefix}/mcp`)) return undefined;
      const rest = resource.slice(`${root.origin}${prefix}/mcp`.length);
      if (rest === '') return {};
      const match = /^\/p\/([^/?#]+)$/.exec(rest);
      return match?.[1] && PROVIDER_SLUG.test(match[1]) ? { provider: match[1] } : undefined;
    },
    metadataUrlOf: (target) => `${root.origin}/.well-known/oauth-protected-resource${path(target)}`,
  };
}

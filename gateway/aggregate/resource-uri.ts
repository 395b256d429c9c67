/**
 * Resource URIs on `/mcp`: each provider's URIs (and URI templates) are shown under a scheme that
 * names the provider, `plaza+<provider>:<the provider's URI as written>`, and mapped back
 * exactly. The provider's URI stays whole in the opaque part, so a template's variables expand as
 * the provider wrote them and no URL parser normalises the provider's path (see
 * docs/decisions/gateway.md, "Resource URIs on /mcp name their provider").
 */

const PREFIX = 'plaza+';
/** A provider slug as the marketplace gives them. */
const PROVIDER = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The URI `/mcp` shows for `provider`'s resource (or template) `uri`. */
export function aggregateUri(provider: string, uri: string): string {
  return `${PREFIX}${provider}:${uri}`;
}

/** The provider and its own URI behind a URI `/mcp` showed, or undefined when it names none. */
export function providerUri(uri: string): { provider: string; uri: string } | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const colon = uri.indexOf(':', PREFIX.length);
  if (colon < 0) return undefined;
  const provider = uri.slice(PREFIX.length, colon);
  const own = uri.slice(colon + 1);
  return PROVIDER.test(provider) && own !== '' ? { provider, uri: own } : undefined;
}

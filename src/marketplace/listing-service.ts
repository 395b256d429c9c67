import { isIP } from 'node:net';

import { assertUrlLiterallyAllowed, type EndpointStatus, SsrfError } from '../../probes/index.ts';
import { type Clock, ConflictError, NotFoundError, ValidationError } from '../kernel/index.ts';
import type { EndpointFilter, EndpointRepository } from './endpoint-repository.ts';
import { type ListingBody, RESERVED_PROVIDERS } from './listing-input.ts';
import { assertNoSecrets } from './secret-check.ts';
import type { ToolRepository } from './tool-repository.ts';
import type { Endpoint, Page, ProbeRunRecord, Tool } from './types.ts';

/** Dependencies of the listing service. */
export interface ListingServiceDeps {
  endpoints: EndpointRepository;
  tools: ToolRepository;
  clock: Clock;
  allowPrivateTargets: boolean;
  /** Starts a probe of a new listing in the background; must not throw. */
  probeSoon(endpointId: string): void;
  /** Notes that callers wanted an endpoint (feeds the probe scheduler). */
  recordDemand(endpointId: string): void;
  /** Notes a search that found nothing (pulls the registry sooner). */
  noteUnmetSearch(): void;
}

/** The outcome of a registration: the listing and whether it is new. */
export interface Registration {
  endpoint: Endpoint;
  created: boolean;
}

/** The catalog (spec §2.2). */
export interface Catalog {
  endpointCount: number;
  toolCount: number;
  endpoints: Page<Endpoint>;
  tools: Page<Tool>;
}

/** The marketplace's operations, independent of HTTP. */
export interface ListingService {
  register(body: ListingBody): Promise<Registration>;
  catalog(limit: number): Promise<Catalog>;
  listEndpoints(filter: EndpointFilter, limit: number, cursor?: string): Promise<Page<Endpoint>>;
  getEndpoint(id: string, probes: number): Promise<{ endpoint: Endpoint; probes: ProbeRunRecord[] }>;
  searchTools(query: { q?: string | undefined; provider?: string | undefined; limit: number; cursor?: string | undefined }): Promise<Page<Tool>>;
}

const ENDPOINT_ID = /^mcp_[0-9a-z]{10,40}$/;

/**
 * Normalises a listing URL so the same endpoint is one listing: what the URL parser already does
 * (scheme and host case, default port, IP forms, dot segments), plus no fragment, no empty query,
 * no trailing dot on a host name, and escapes as RFC 3986 §6.2.2 compares them (unreserved
 * characters decoded, the others in upper case). `/mcp` and `/mcp/` stay two URLs: servers may
 * tell them apart.
 */
export function normaliseListingUrl(raw: string): URL {
  const url = new URL(raw);
  url.hash = '';
  // Read back, a lone `?` is an empty search; written, an empty search drops the `?`.
  url.search = normaliseEscapes(url.search);
  url.pathname = normaliseEscapes(url.pathname);
  if (url.hostname.endsWith('.') && isIP(url.hostname.slice(0, -1)) === 0) url.hostname = url.hostname.slice(0, -1);
  return url;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function normaliseEscapes(text: string): string {
  return text.replace(/%[0-9A-Fa-f]{2}/g, (escape) => {
    const char = String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    return UNRESERVED.test(char) ? char : escape.toUpperCase();
  });
}

/** Creates the listing service. */
export function createListingService(deps: ListingServiceDeps): ListingService {
  const { endpoints, tools, clock } = deps;
  return {
    async register(body) {
      const url = normaliseListingUrl(body.url);
      assertNoSecrets(url, {
        summary: body.summary,
        audience: body.audience,
        purpose: body.purpose,
        risk: body.risk,
        ...Object.fromEntries(body.required_credentials.map((c, i) => [`required_credentials.${i}.description`, c.description])),
      });
      try {
        assertUrlLiterallyAllowed(url, deps.allowPrivateTargets);
      } catch (error) {
        if (error instanceof SsrfError) throw new ValidationError(`Invalid listing: url: ${error.message}`, { param: 'url', cause: error });
        throw error;
      }
      const registeredBy = body.registered_by.toLowerCase();
      /** The listing of this URL when there is one: this very listing (answered as stored), or a conflict. */
      const listedAlready = async (): Promise<{ endpoint: Endpoint; created: false } | undefined> => {
        const existing = await endpoints.findByUrl(url.href);
        if (!existing) return undefined;
        if (existing.registeredBy !== registeredBy) throw new ConflictError('This URL is already listed by another registrant.', { param: 'url' });
        // The same listing sent again is answered with the one stored; under another slug it is
        // a second listing of the same server, which the caller should hear about, not lose.
        if (existing.provider !== body.provider) {
          throw new ConflictError(`This URL is already listed, as provider "${existing.provider}" (${existing.id}); a server is listed once.`, { param: 'url' });
        }
        return { endpoint: existing, created: false };
      };
      const stored = await listedAlready();
      if (stored) return stored;
      if (RESERVED_PROVIDERS.has(body.provider)) throw new ConflictError(`Provider slug "${body.provider}" is reserved for Plaza's own tools.`, { param: 'provider' });
      // The same listing sent twice at once (a client's retry, several instances) may be stored by
      // the other request between the look-up above and here: it is then answered as stored too.
      const holder = await endpoints.findByProvider(body.provider);
      if (holder) {
        const raced = await listedAlready();
        if (raced) return raced;
        throw new ConflictError(`Provider slug "${body.provider}" is already taken by another listing.`, { param: 'provider' });
      }
      let endpoint: Endpoint;
      try {
        endpoint = await endpoints.create(
          {
            provider: body.provider,
            url: url.href,
            registeredBy,
            aginSupport: body.agin_support,
            summary: body.summary,
            audience: body.audience ?? null,
            requiredCredentials: body.required_credentials.map((c) => ({ name: c.name, ...(c.description ? { description: c.description } : {}), required: c.required })),
            purpose: body.purpose ?? null,
            risk: body.risk ?? null,
          },
          clock.now(),
        );
      } catch (error) {
        if (error instanceof ConflictError) {
          const raced = await listedAlready();
          if (raced) return raced;
        }
        throw error;
      }
      deps.probeSoon(endpoint.id);
      return { endpoint, created: true };
    },
    async catalog(limit) {
      const [endpointCount, toolCount, endpointPage, toolPage] = await Promise.all([
        endpoints.count(),
        tools.countOnline(),
        endpoints.list({}, limit, undefined),
        tools.search({ limit }),
      ]);
      return { endpointCount, toolCount, endpoints: endpointPage, tools: toolPage };
    },
    listEndpoints(filter, limit, cursor) {
      return endpoints.list(filter, limit, cursor);
    },
    async getEndpoint(id, probes) {
      const endpoint = ENDPOINT_ID.test(id) ? await endpoints.findById(id) : undefined;
      if (!endpoint) throw new NotFoundError(`No MCP endpoint with id ${JSON.stringify(id.slice(0, 80))}.`);
      deps.recordDemand(endpoint.id);
      return { endpoint, probes: await endpoints.recentProbes(id, probes) };
    },
    async searchTools(query) {
      const page = await tools.search(query);
      if (query.q !== undefined || query.provider !== undefined) {
        for (const endpointId of new Set(page.items.map((t) => t.endpointId))) deps.recordDemand(endpointId);
      }
      if (query.q !== undefined && query.cursor === undefined && page.items.length === 0) deps.noteUnmetSearch();
      return page;
    },
  };
}

/** Statuses a caller may filter the endpoint list by. */
export const ENDPOINT_STATUSES: readonly EndpointStatus[] = ['registered', 'healthy', 'degraded', 'unreachable', 'auth_required'];

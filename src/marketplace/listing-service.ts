import { isIP } from 'node:net';

import { assertUrlLiterallyAllowed, type EndpointStatus, SsrfError } from '../../probes/index.ts';
import { type Clock, ConflictError, NotFoundError, ValidationError } from '../kernel/index.ts';
import type { EndpointFilter, EndpointRepository, ListingDetails } from './endpoint-repository.ts';
import { type ListingBody, type ListingChanges, RESERVED_PROVIDERS } from './listing-input.ts';
import {
  assertOwner,
  changedDetails,
  detailsOfBody,
  detailsOfChanges,
  HOW_TO_OWN,
  textsOf,
} from './listing-ownership.ts';
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
  /** Notes that listings were removed (the tool search drops their tools at once). */
  listingsRemoved(): void;
}

/** The outcome of a registration: the listing, whether it is new, and whether it was changed. */
export interface Registration {
  endpoint: Endpoint;
  created: boolean;
  /** An existing listing of the caller's account whose details this registration changed. */
  updated: boolean;
  /** The id of the anonymous listing of the same URL that the new account listing replaced. */
  supersedes?: string;
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
  /**
   * Lists an endpoint for `accountId` (null: anonymously). The same listing sent again is answered
   * as stored; with other details it is changed when the caller's account owns it, and a 409
   * otherwise. An account listing a URL held by an anonymous listing supersedes that listing, under
   * its provider slug. A slug a removed listing held is taken again only for its URL (and, of an
   * account's listing, only by that account).
   */
  register(body: ListingBody, accountId?: string | null): Promise<Registration>;
  /** Changes the details of a listing owned by `accountId` (403 for anyone else). */
  update(id: string, changes: ListingChanges, accountId: string): Promise<{ endpoint: Endpoint; updated: boolean }>;
  /**
   * Removes a listing owned by `accountId` (403 for anyone else): it leaves the catalog and the
   * gateway; its slug stays bound to its URL.
   */
  remove(id: string, accountId: string): Promise<Endpoint>;
  catalog(limit: number): Promise<Catalog>;
  listEndpoints(filter: EndpointFilter, limit: number, cursor?: string): Promise<Page<Endpoint>>;
  getEndpoint(id: string, probes: number): Promise<{ endpoint: Endpoint; probes: ProbeRunRecord[] }>;
  searchTools(query: {
    q?: string | undefined;
    provider?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Tool>>;
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
  const notFound = (id: string) => new NotFoundError(`No MCP endpoint with id ${JSON.stringify(id.slice(0, 80))}.`);
  const findOwn = async (id: string, accountId: string): Promise<Endpoint> => {
    const endpoint = ENDPOINT_ID.test(id) ? await endpoints.findById(id) : undefined;
    if (!endpoint) throw notFound(id);
    assertOwner(endpoint, accountId);
    return endpoint;
  };
  return {
    async register(body, accountId = null) {
      const url = normaliseListingUrl(body.url);
      const details = detailsOfBody(body);
      assertNoSecrets(url, textsOf(details));
      try {
        assertUrlLiterallyAllowed(url, deps.allowPrivateTargets);
      } catch (error) {
        if (error instanceof SsrfError)
          throw new ValidationError(`Invalid listing: url: ${error.message}`, { param: 'url', cause: error });
        throw error;
      }
      const sameSlug = (existing: Endpoint) => {
        // Under another slug it is a second listing of the same server, which the caller should
        // hear about, not lose.
        if (existing.provider !== body.provider) {
          throw new ConflictError(
            `This URL is already listed, as provider "${existing.provider}" (${existing.id}); a server is listed once.`,
            { param: 'url' },
          );
        }
      };
      /**
       * What a listing of this URL already there means for this registration: the answer (the
       * listing as stored or as changed by its owner), a conflict, or an anonymous listing this
       * account listing supersedes.
       */
      const listedAlready = async (): Promise<Registration | { anonymous: Endpoint } | undefined> => {
        const existing = await endpoints.findByUrl(url.href);
        if (!existing) return undefined;
        if (existing.accountId !== null) {
          if (existing.accountId !== accountId) {
            throw new ConflictError(
              `This URL is already listed (${existing.id}) and belongs to a Plaza account; only that account can change or remove the listing.`,
              { param: 'url' },
            );
          }
          sameSlug(existing);
          const changes = changedDetails(existing, details);
          if (Object.keys(changes).length === 0) return { endpoint: existing, created: false, updated: false };
          return { endpoint: await endpoints.update(existing.id, changes), created: false, updated: true };
        }
        // registered_by is not verified: only an account's listing may displace an anonymous one,
        // and only under its slug, which agents already trust with credentials for this server;
        // under another, the old slug would be free for any other server.
        if (accountId !== null) {
          if (existing.provider !== body.provider) {
            throw new ConflictError(
              `This URL is listed anonymously as provider "${existing.provider}" (${existing.id}). Your account's listing takes it over under the same slug, which agents already use for this server: send provider "${existing.provider}".`,
              { param: 'provider' },
            );
          }
          return { anonymous: existing };
        }
        if (existing.registeredBy !== details.registeredBy) {
          throw new ConflictError(
            `This URL is already listed by another registrant. If the server is yours, ${HOW_TO_OWN}: a listing made by an account supersedes an anonymous one.`,
            { param: 'url' },
          );
        }
        sameSlug(existing);
        if (Object.keys(changedDetails(existing, details)).length > 0) {
          throw new ConflictError(
            `This URL is already listed (${existing.id}) with other details, and an anonymous listing cannot be changed. To change it, ${HOW_TO_OWN}: the listing then belongs to your account, which can change it (PATCH /api/mcp/listings/${existing.id} for its own) or remove it.`,
            { param: 'url' },
          );
        }
        return { endpoint: existing, created: false, updated: false };
      };
      /** The answer when the URL turned out listed meanwhile (a retry, another instance). */
      const raced = async (): Promise<Registration | undefined> => {
        const found = await listedAlready();
        return found && 'endpoint' in found ? found : undefined;
      };
      const found = await listedAlready();
      if (found && 'endpoint' in found) return found;
      const superseded = found?.anonymous;
      if (RESERVED_PROVIDERS.has(body.provider))
        throw new ConflictError(`Provider slug "${body.provider}" is reserved for Plaza's own tools.`, {
          param: 'provider',
        });
      // The same listing sent twice at once (a client's retry, several instances) may be stored by
      // the other request between the look-up above and here: it is then answered as stored too.
      const holder = await endpoints.findByProvider(body.provider);
      if (holder && holder.id !== superseded?.id) {
        const answer = await raced();
        if (answer) return answer;
        throw new ConflictError(`Provider slug "${body.provider}" is already taken by another listing.`, {
          param: 'provider',
        });
      }
      const listing = { provider: body.provider, url: url.href, accountId, ...details };
      let endpoint: Endpoint;
      try {
        endpoint = superseded
          ? await endpoints.supersede(superseded.id, listing, clock.now())
          : await endpoints.create(listing, clock.now());
      } catch (error) {
        if (error instanceof ConflictError) {
          const answer = await raced();
          if (answer) return answer;
        }
        throw error;
      }
      if (superseded) deps.listingsRemoved();
      deps.probeSoon(endpoint.id);
      return { endpoint, created: true, updated: false, ...(superseded ? { supersedes: superseded.id } : {}) };
    },
    async update(id, changes, accountId) {
      const endpoint = await findOwn(id, accountId);
      const details: Partial<ListingDetails> = detailsOfChanges(changes);
      assertNoSecrets(new URL(endpoint.url), textsOf(details));
      const changed = changedDetails(endpoint, details);
      if (Object.keys(changed).length === 0) return { endpoint, updated: false };
      return { endpoint: await endpoints.update(id, changed), updated: true };
    },
    async remove(id, accountId) {
      const endpoint = await findOwn(id, accountId);
      if (!(await endpoints.remove(id, accountId, clock.now()))) throw notFound(id);
      deps.listingsRemoved();
      return endpoint;
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
      if (!endpoint) throw notFound(id);
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
export const ENDPOINT_STATUSES: readonly EndpointStatus[] = [
  'registered',
  'healthy',
  'degraded',
  'unreachable',
  'auth_required',
];

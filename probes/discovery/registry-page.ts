import { createHash } from 'node:crypto';

import { z } from 'zod';

import { storableText } from '../../src/kernel/index.ts';
import { assertUrlLiterallyAllowed } from '../ssrf.ts';

/** A credential a server needs from its caller: a name and what it is for, never a value. */
export interface RequiredCredential {
  name: string;
  description?: string;
  required: boolean;
}

/** A connectable server found in the registry. */
export interface DiscoveredServer {
  /** The registry's identity, e.g. `io.github.owner/weather`. */
  registryName: string;
  /** A provider slug derived from the registry name. */
  provider: string;
  url: string;
  summary: string;
  requiredCredentials: RequiredCredential[];
}

/** What to do with one registry entry. */
export type RegistryDecision =
  | { kind: 'keep'; server: DiscoveredServer }
  | { kind: 'remove'; registryName: string; reason: string }
  | { kind: 'skip'; reason: string };

/** One parsed page of `GET /v0.1/servers`. */
export interface RegistryPage {
  decisions: RegistryDecision[];
  nextCursor: string | undefined;
}

const OFFICIAL = 'io.modelcontextprotocol.registry/official';

const HeaderSchema = z.looseObject({
  name: z.string().min(1).max(200),
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
});
const RemoteSchema = z.looseObject({
  type: z.string(),
  url: z.string().optional(),
  headers: z.array(HeaderSchema).optional(),
});
const EntrySchema = z.looseObject({
  server: z.looseObject({
    name: z.string().min(1).max(300),
    description: z.string().optional(),
    title: z.string().optional(),
    remotes: z.array(RemoteSchema).optional(),
  }),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
const PageSchema = z.looseObject({
  servers: z.array(z.unknown()),
  metadata: z.looseObject({ nextCursor: z.string().nullish(), next_cursor: z.string().nullish() }).optional(),
});

const SLUG_MAX = 63;

/** A provider slug (`^[a-z0-9][a-z0-9-]{1,62}$`) for a registry name; long names keep a hash suffix. */
export function providerSlugFor(registryName: string): string {
  let slug = registryName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug.length < 2) slug = `server-${slug}`.replace(/-+$/, '');
  if (slug.length > SLUG_MAX) slug = `${slug.slice(0, SLUG_MAX - 9).replace(/-+$/, '')}-${shortHash(registryName)}`;
  return slug;
}

/** 8 hex characters of sha256, to keep derived names unique. */
export function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}

// A loopback, private or metadata address is refused as a manual listing's is: probes could never
// reach it, and the registry is full of `http://localhost:…` remotes.
function isConnectableUrl(url: string, allowPrivate: boolean): boolean {
  if (url.includes('{') || storableText(url) !== url || !URL.canParse(url)) return false;
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '') return false;
  try {
    assertUrlLiterallyAllowed(parsed, allowPrivate);
    return true;
  } catch {
    return false;
  }
}

/**
 * Decides what one registry item means for the listing table. `allowPrivate`: whether loopback
 * and private targets may be listed (PLAZA_ALLOW_PRIVATE_TARGETS).
 */
export function decideEntry(raw: unknown, allowPrivate = false): RegistryDecision {
  const parsed = EntrySchema.safeParse(raw);
  if (!parsed.success) return { kind: 'skip', reason: 'not a registry entry' };
  const { server } = parsed.data;
  // Text from the registry is stored: a name holding NUL or a lone surrogate cannot be, and
  // would fail the whole pull's write every time (other text is made storable below).
  if (storableText(server.name) !== server.name) return { kind: 'skip', reason: 'name is not storable text' };
  const official = parsed.data._meta?.[OFFICIAL] as { status?: unknown; isLatest?: unknown } | undefined;
  if (official?.isLatest === false) return { kind: 'skip', reason: 'not the latest version' };
  const status = typeof official?.status === 'string' ? official.status : 'active';
  if (status !== 'active') return { kind: 'remove', registryName: server.name, reason: `status ${status}` };
  const remote = server.remotes?.find(
    (r) => r.type === 'streamable-http' && r.url !== undefined && isConnectableUrl(r.url, allowPrivate),
  );
  if (!remote) return { kind: 'remove', registryName: server.name, reason: 'no connectable streamable-http remote' };
  const summary = storableText((server.description ?? server.title ?? '').slice(0, 2_000));
  const requiredCredentials = (remote.headers ?? []).map((h) => ({
    name: storableText(h.name),
    ...(h.description ? { description: storableText(h.description.slice(0, 500)) } : {}),
    required: h.isRequired === true,
  }));
  return {
    kind: 'keep',
    server: {
      registryName: server.name,
      provider: providerSlugFor(server.name),
      url: remote.url!,
      summary,
      requiredCredentials,
    },
  };
}

/** Parses one page; throws when the body is not a v0.1 server list at all. */
export function parseRegistryPage(body: unknown, allowPrivate = false): RegistryPage {
  const page = PageSchema.parse(body);
  const next = page.metadata?.nextCursor ?? page.metadata?.next_cursor ?? undefined;
  return {
    decisions: page.servers.map((entry) => decideEntry(entry, allowPrivate)),
    nextCursor: next === null || next === '' ? undefined : next,
  };
}

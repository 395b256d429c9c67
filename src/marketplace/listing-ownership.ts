import { ForbiddenError } from '../kernel/index.ts';
import type { ListingDetails } from './endpoint-repository.ts';
import type { ListingBody, ListingChanges } from './listing-input.ts';
import type { AginLimits, Endpoint } from './types.ts';

/** How a caller gets a listing of their own, said wherever an anonymous one is in the way. */
export const HOW_TO_OWN = 'list it with POST /api/mcp/listings and your account API key (Authorization: Bearer plz_…)';

/** Declared limits as stored: null for none (`null`, `{}` or absent). */
function limitsOrNull(limits: AginLimits | null | undefined): AginLimits | null {
  if (!limits) return null;
  const out: AginLimits = {};
  if (limits.per_minute !== undefined) out.per_minute = limits.per_minute;
  if (limits.per_day !== undefined) out.per_day = limits.per_day;
  return Object.keys(out).length > 0 ? out : null;
}

/** The details a listing body gives, as stored (a POST replaces them all: a field left out is cleared). */
export function detailsOfBody(body: ListingBody): ListingDetails {
  return {
    registeredBy: body.registered_by.toLowerCase(),
    aginSupport: body.agin_support,
    summary: body.summary,
    audience: body.audience ?? null,
    requiredCredentials: body.required_credentials.map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      required: c.required,
    })),
    purpose: body.purpose ?? null,
    risk: body.risk ?? null,
    aginLimits: limitsOrNull(body.agin_limits),
  };
}

/** The details a PATCH body names, as stored (fields it leaves out stay as they are). */
export function detailsOfChanges(changes: ListingChanges): Partial<ListingDetails> {
  const out: Partial<ListingDetails> = {};
  if (changes.registered_by !== undefined) out.registeredBy = changes.registered_by.toLowerCase();
  if (changes.agin_support !== undefined) out.aginSupport = changes.agin_support;
  if (changes.summary !== undefined) out.summary = changes.summary;
  if (changes.audience !== undefined) out.audience = changes.audience;
  if (changes.required_credentials !== undefined) {
    out.requiredCredentials = changes.required_credentials.map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      required: c.required,
    }));
  }
  if (changes.purpose !== undefined) out.purpose = changes.purpose;
  if (changes.risk !== undefined) out.risk = changes.risk;
  if (changes.agin_limits !== undefined) out.aginLimits = limitsOrNull(changes.agin_limits);
  return out;
}

/** The free-text fields of `details`, by the name the secret check reports them under. */
export function textsOf(details: Partial<ListingDetails>): Record<string, string | undefined> {
  return {
    summary: details.summary,
    audience: details.audience ?? undefined,
    purpose: details.purpose ?? undefined,
    risk: details.risk ?? undefined,
    ...Object.fromEntries(
      (details.requiredCredentials ?? []).map((c, i) => [`required_credentials.${i}.description`, c.description]),
    ),
  };
}

/** The part of `details` that differs from what `endpoint` holds; empty when nothing would change. */
export function changedDetails(endpoint: Endpoint, details: Partial<ListingDetails>): Partial<ListingDetails> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details) as [keyof ListingDetails, unknown][]) {
    if (value === undefined) continue;
    const same =
      key === 'requiredCredentials' || key === 'aginLimits'
        ? JSON.stringify(value) === JSON.stringify(endpoint[key])
        : value === endpoint[key];
    if (!same) changed[key] = value;
  }
  return changed as Partial<ListingDetails>;
}

/** Throws ForbiddenError unless `accountId` owns `endpoint`, saying what the caller can do instead. */
export function assertOwner(endpoint: Endpoint, accountId: string): void {
  if (endpoint.accountId === accountId) return;
  if (endpoint.accountId === null) {
    throw new ForbiddenError(
      `Listing ${endpoint.id} was made anonymously (or found by discovery) and belongs to no account, so it cannot be changed or removed. If the server is yours, ${HOW_TO_OWN}: your listing supersedes it.`,
    );
  }
  throw new ForbiddenError(
    `Listing ${endpoint.id} belongs to another account; only that account can change or remove it.`,
  );
}

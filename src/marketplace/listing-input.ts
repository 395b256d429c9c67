import { z } from 'zod';

import { ValidationError } from '../kernel/index.ts';

/** Provider slugs (issue 3): lower-case letters, digits and dashes, 2–63 characters. */
export const PROVIDER_SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

/**
 * Slugs no listing may take: `platform` is Plaza's own provider (src/connectors), which the
 * gateway serves itself at `/mcp/p/platform` and as `platform__<tool>` on `/mcp`.
 */
export const RESERVED_PROVIDERS: ReadonlySet<string> = new Set(['platform']);

const noNul = (value: string) => !value.includes('\u0000');
// A lone surrogate cannot be stored as written (a json column refuses it outright): refused.
const wellFormed = (value: string) => value.isWellFormed();
const WELL_FORMED = 'must be well-formed Unicode (a lone surrogate is not)';
const text = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .refine(noNul, 'must not contain NUL characters')
    .refine(wellFormed, WELL_FORMED);

const CredentialSchema = z.union([
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'at most 100 characters')
    .refine(noNul, 'must not contain NUL characters')
    .refine(wellFormed, WELL_FORMED)
    .transform((name): { name: string; description?: string; required: boolean } => ({ name, required: true })),
  z.strictObject({
    name: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'at most 100 characters')
      .refine(noNul, 'must not contain NUL characters')
      .refine(wellFormed, WELL_FORMED),
    description: text(500).optional(),
    required: z.boolean().default(true),
  }),
]);

// Lower-cased before it is checked: the stored form is what must fit and what is compared.
const RegisteredBySchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, 'at most 254 characters')
  .refine(wellFormed, WELL_FORMED)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an e-mail-like identifier of the accountable publisher');
/** The longest optional texts of a listing (the Marketplace page's fields hold as many characters). */
export const LISTING_TEXT_MAX = { audience: 500, purpose: 1_000, risk: 1_000 } as const;
const SummarySchema = text(4_000).trim().min(1, 'must say what the connector can do');
const CredentialsSchema = z.array(CredentialSchema).max(20, 'at most 20 entries');

/**
 * Per-AGIN limits a provider declares (issue 35): calls per minute and per day of each calling
 * agent, which the gateway enforces. Whole numbers from 1; `{}` or null: none.
 */
const AginLimitsSchema = z
  .strictObject({
    per_minute: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000_000).optional(),
    per_day: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000_000).optional(),
  })
  .describe('Per calling agent (AGIN), for this provider: Plaza refuses calls beyond them (rate_limited).');

/** The body of `POST /api/mcp/listings` (spec §2.1 plus the optional metadata of §2.1). */
export const ListingBodySchema = z.strictObject({
  provider: z
    .string()
    .regex(PROVIDER_SLUG, 'must match ^[a-z0-9][a-z0-9-]{1,62}$ (lower-case letters, digits, dashes)'),
  url: z
    .string()
    .max(2_048, 'at most 2048 characters')
    .refine(
      (v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol),
      'must be an http or https URL',
    ),
  registered_by: RegisteredBySchema,
  agin_support: z.boolean().default(false),
  summary: SummarySchema,
  audience: text(LISTING_TEXT_MAX.audience).trim().optional(),
  required_credentials: CredentialsSchema.default([]),
  purpose: text(LISTING_TEXT_MAX.purpose).trim().optional(),
  risk: text(LISTING_TEXT_MAX.risk).trim().optional(),
  agin_limits: AginLimitsSchema.nullable().optional(),
});

/**
 * The body of `PATCH /api/mcp/listings/:id`: the fields to change, each as in a listing; `null`
 * clears an optional text. The URL and the provider slug are the listing's identity (the gateway
 * routes by the slug) and are not among them.
 */
export const ListingChangesSchema = z
  .strictObject({
    registered_by: RegisteredBySchema.optional(),
    agin_support: z.boolean().optional(),
    summary: SummarySchema.optional(),
    audience: text(LISTING_TEXT_MAX.audience).trim().nullable().optional(),
    required_credentials: CredentialsSchema.optional(),
    purpose: text(LISTING_TEXT_MAX.purpose).trim().nullable().optional(),
    risk: text(LISTING_TEXT_MAX.risk).trim().nullable().optional(),
    agin_limits: AginLimitsSchema.nullable().optional(),
  })
  .refine((changes) => Object.keys(changes).length > 0, 'must name at least one field to change');

/** A parsed listing change. */
export type ListingChanges = z.infer<typeof ListingChangesSchema>;

/** Parses a listing change; the URL or the provider slug in it is refused with a message saying what to do instead. */
export function parseListingChanges(value: unknown): ListingChanges {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const fixed = ['provider', 'url'].find((field) => field in value);
    if (fixed) {
      throw new ValidationError(
        `Invalid listing change: ${fixed}: cannot be changed; remove the listing (DELETE /api/mcp/listings/:id) and list it again.`,
        { param: fixed },
      );
    }
  }
  return parseOrThrow(ListingChangesSchema, value, 'listing change');
}

/** A parsed listing body. */
export type ListingBody = z.infer<typeof ListingBodySchema>;

/**
 * The issues that say what is wrong: for a value that fits no alternative of a union (a credential
 * is a name or an object), those of the alternative that took its type (a name of 200 characters
 * is "at most 100 characters", not zod's "Invalid input"), with the union's path in front.
 */
function decisiveIssues(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const taken = issue.errors.find(
    (branch) => branch.length > 0 && !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0),
  );
  if (!taken) return [issue];
  return taken.flatMap((i) => decisiveIssues({ ...i, path: [...issue.path, ...i.path] }));
}

/** Parses with `schema` or throws a ValidationError that names every bad field. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  // No body is an empty object; a body that is not an object (null, an array, a string) is said as such,
  // not as the missing fields of an empty object.
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new ValidationError(
      `Invalid ${what}: must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}.`,
    );
  }
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.flatMap(decisiveIssues).map((i) => ({
    path: i.path.map(String).join('.'),
    message: i.code === 'unrecognized_keys' ? `unknown field(s): ${i.keys.join(', ')}` : i.message,
  }));
  const first = issues[0];
  const message = first
    ? `Invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`
    : `Invalid ${what}.`;
  throw new ValidationError(message, { details: { issues }, ...(first?.path ? { param: first.path } : {}) });
}

/**
 * The policy document an account puts on an agent (issue 35): allow and deny rules over providers
 * and tools, optional annotation conditions, and call limits. One zod schema validates it at the
 * edge and describes it in the OpenAPI document; a malformed document is a 400 that names the rule
 * index and the field.
 */
import { z } from 'zod';

import { ValidationError } from '../kernel/index.ts';

/** Most rules one policy holds. */
export const MAX_RULES = 200;
/** Longest provider or tool pattern. */
export const MAX_PATTERN_LENGTH = 300;
/** Most providers one policy's `limits.per_provider` names. */
export const MAX_PROVIDER_LIMITS = 100;
/** Largest limit (calls per window): beyond it a limit means nothing a counter must hold. */
export const MAX_LIMIT = 1_000_000_000;

const count = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_LIMIT, `must be at most ${MAX_LIMIT}`);

const pattern = (what: string) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_PATTERN_LENGTH, `must be at most ${MAX_PATTERN_LENGTH} characters`)
    .refine((v) => !v.includes('\u0000') && v.isWellFormed(), 'must be well-formed text without NUL')
    .describe(`Glob over the ${what}: \`*\` any run of characters, \`?\` one character, anything else literal.`);

/** Calls per minute and per day. */
export const WindowLimitsSchema = z.strictObject({
  per_minute: count.optional().describe('Calls per minute (UTC minute windows).'),
  per_day: count.optional().describe('Calls per day (UTC day windows).'),
});

/** One allow or deny rule. */
export const PolicyRuleSchema = z.strictObject({
  effect: z.enum(['allow', 'deny']),
  provider: pattern('provider slug (`platform` for Plaza’s own tools)'),
  tool: pattern('tool’s own name (without `<provider>__`)'),
  annotations: z
    .record(
      z.string().min(1).max(100),
      z.union([z.boolean(), z.string().max(300), z.number()]).describe('the value the annotation must have'),
    )
    .refine((v) => Object.keys(v).length <= 20, 'at most 20 annotations')
    .optional()
    .describe(
      'The rule matches only tools whose annotations have these values (MCP defaults apply to the four hints).',
    ),
});

/** An agent's policy document (PUT /api/agents/:id/policy, and an account's default policy). */
export const PolicyDocumentSchema = z
  .strictObject({
    default: z
      .enum(['allow', 'deny'])
      .optional()
      .describe(
        'When no rule matches. Absent: "deny" if the policy has an allow rule, else the account default policy’s, else "allow".',
      ),
    rules: z.array(PolicyRuleSchema).max(MAX_RULES, `at most ${MAX_RULES} rules`).default([]),
    limits: WindowLimitsSchema.extend({
      per_provider: z
        .record(z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'must be a provider slug'), WindowLimitsSchema)
        .refine((v) => Object.keys(v).length <= MAX_PROVIDER_LIMITS, `at most ${MAX_PROVIDER_LIMITS} providers`)
        .optional()
        .describe('Per provider slug: calls of this agent to that provider.'),
    })
      .optional()
      .describe('Call limits of the agent; whole numbers >= 1.'),
  })
  .describe('Who may call what: an agent policy (docs/gateway.md, "Who may call what").');

/** The account's default agent policy and its account-wide ceiling (GET/PUT /api/account/agent-policy). */
export const AccountPolicySchema = z.strictObject({
  default_policy: PolicyDocumentSchema.nullable()
    .default(null)
    .describe('Applies to every agent of the account without a policy of its own; null: none.'),
  limits: WindowLimitsSchema.default({}).describe('Account-wide ceiling: calls of all its agents together.'),
});

/** The per-AGIN limits a provider declares on its listing (`agin_limits`). */
export const AginLimitsSchema = WindowLimitsSchema.describe(
  'Per calling agent (AGIN), for this provider: Plaza refuses calls beyond them.',
);

/** A policy document as validated. */
export type PolicyDocument = z.output<typeof PolicyDocumentSchema>;
/** One rule. */
export type PolicyRule = z.output<typeof PolicyRuleSchema>;
/** Calls per minute and per day. */
export type WindowLimits = z.output<typeof WindowLimitsSchema>;
/** An account's policy settings. */
export type AccountPolicy = z.output<typeof AccountPolicySchema>;

/**
 * Parses with `schema` or throws a 400 naming the first bad field by its path (`rules[3].tool`), so
 * a caller with 200 rules knows which one to fix.
 */
export function parsePolicyInput<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError(`Invalid ${what}: must be a JSON object.`, { param: null });
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as z.output<T>;
  const issue = parsed.error.issues[0]!;
  const path = fieldPath(issue.path);
  const rule = issue.path[0] === 'rules' && typeof issue.path[1] === 'number' ? `rule ${issue.path[1]}: ` : '';
  const message = issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message;
  throw new ValidationError(`Invalid ${what}: ${rule}${path ? `${path}: ` : ''}${message}.`, {
    param: path || null,
    details: parsed.error.issues.slice(0, 20),
  });
}

/** `rules[3].tool` from zod's path. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`;
  return out;
}

/**
 * A stored document read back: what the schema accepts, else undefined (a row written by a later
 * version, or by hand). Never throws.
 */
export function storedDocument(value: unknown): PolicyDocument | undefined {
  const parsed = PolicyDocumentSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

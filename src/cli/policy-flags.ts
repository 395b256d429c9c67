/**
 * The policy document that `plaza agents policy set`'s options describe (the body of
 * `PUT /api/agents/:id/policy`, docs/gateway.md). Pure: the command turns a thrown
 * PolicyFlagError into a usage error (exit 2); the server checks the rest (globs, counts).
 */

/** A rule of an agent policy, as the API takes it. */
export interface PolicyRule {
  effect: 'allow' | 'deny';
  provider: string;
  tool: string;
  annotations?: Record<string, boolean>;
}

/** Calls per minute and per day; either may be absent. */
export interface PolicyWindowLimits {
  per_minute?: number;
  per_day?: number;
}

/** An agent policy document, as `PUT /api/agents/:id/policy` takes it. */
export interface PolicyDocument {
  default?: 'allow' | 'deny';
  rules: PolicyRule[];
  limits?: PolicyWindowLimits & { per_provider?: Record<string, PolicyWindowLimits> };
}

/** The options of `plaza agents policy set` that describe a policy (all strings, as typed). */
export interface PolicyFlags {
  allow?: string[];
  deny?: string[];
  allowAnnotation?: string[];
  denyAnnotation?: string[];
  default?: string;
  perMinute?: string;
  perDay?: string;
  providerLimit?: string[];
}

/** A flag that does not describe a policy; its message says what to write instead. */
export class PolicyFlagError extends Error {}

/** `<provider>/<tool>`, split at the first `/` (a tool's own name may hold more). */
function target(flag: string, value: string): { provider: string; tool: string } {
  const at = value.indexOf('/');
  const provider = value.slice(0, at).trim();
  const tool = value.slice(at + 1).trim();
  if (at < 0 || provider === '' || tool === '')
    throw new PolicyFlagError(
      `${flag} ${value}: write <provider>/<tool>, e.g. crm/read_* (crm/* for every tool of crm, platform/* for Plaza's own tools)`,
    );
  return { provider, tool };
}

/** `destructiveHint`, `destructiveHint=true` or `readOnlyHint=false`, optionally after `<provider>/<tool>:`. */
function annotationRule(flag: string, effect: 'allow' | 'deny', value: string): PolicyRule {
  const colon = value.lastIndexOf(':');
  const scope = colon < 0 ? { provider: '*', tool: '*' } : target(flag, value.slice(0, colon));
  const match = /^([A-Za-z][A-Za-z0-9_]{0,63})(?:=(true|false))?$/.exec(value.slice(colon + 1).trim());
  if (!match)
    throw new PolicyFlagError(
      `${flag} ${value}: write an annotation name with an optional =true|false (e.g. destructiveHint, or crm/*:openWorldHint=true)`,
    );
  return { effect, ...scope, annotations: { [match[1]!]: match[2] !== 'false' } };
}

/** A whole number of calls from 1 (the API's lower bound); `what` names the option in the message. */
function count(what: string, value: string): number {
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new PolicyFlagError(`${what}: ${value} is not a whole number of calls from 1`);
  return n;
}

/** `crm:10/50`, `crm:10/` (per minute only) or `crm:/50` (per day only). */
function providerLimit(value: string): [string, PolicyWindowLimits] {
  const match = /^([^:\s]+):\s*(\d*)\s*\/\s*(\d*)\s*$/.exec(value.trim());
  if (!match || (match[2] === '' && match[3] === ''))
    throw new PolicyFlagError(
      `--provider-limit ${value}: write <provider>:<per minute>/<per day>, e.g. crm:10/500 (crm:10/ or crm:/500 to set one)`,
    );
  const limits: PolicyWindowLimits = {};
  if (match[2]) limits.per_minute = count(`--provider-limit ${value}`, match[2]);
  if (match[3]) limits.per_day = count(`--provider-limit ${value}`, match[3]);
  return [match[1]!, limits];
}

/** Whether any option that describes a policy was given (else `set` has nothing to write). */
export function describesPolicy(flags: PolicyFlags): boolean {
  return (
    [flags.allow, flags.deny, flags.allowAnnotation, flags.denyAnnotation, flags.providerLimit].some(
      (list) => (list?.length ?? 0) > 0,
    ) || [flags.default, flags.perMinute, flags.perDay].some((v) => v !== undefined)
  );
}

/**
 * The policy the options describe, whole: `set` replaces the agent's policy with it (rules in the
 * order given; the gateway applies any matching deny before any allow, whatever the order).
 */
export function policyFromFlags(flags: PolicyFlags): PolicyDocument {
  const rules: PolicyRule[] = [
    ...(flags.allow ?? []).map((v): PolicyRule => ({ effect: 'allow', ...target('--allow', v) })),
    ...(flags.deny ?? []).map((v): PolicyRule => ({ effect: 'deny', ...target('--deny', v) })),
    ...(flags.allowAnnotation ?? []).map((v) => annotationRule('--allow-annotation', 'allow', v)),
    ...(flags.denyAnnotation ?? []).map((v) => annotationRule('--deny-annotation', 'deny', v)),
  ];
  const policy: PolicyDocument = { rules };
  if (flags.default !== undefined) {
    if (flags.default !== 'allow' && flags.default !== 'deny')
      throw new PolicyFlagError(`--default ${flags.default}: write allow or deny`);
    policy.default = flags.default;
  }
  const limits: NonNullable<PolicyDocument['limits']> = {};
  if (flags.perMinute !== undefined) limits.per_minute = count('--per-minute', flags.perMinute);
  if (flags.perDay !== undefined) limits.per_day = count('--per-day', flags.perDay);
  for (const value of flags.providerLimit ?? []) {
    const [provider, own] = providerLimit(value);
    limits.per_provider = { ...limits.per_provider, [provider]: own };
  }
  if (Object.keys(limits).length > 0) policy.limits = limits;
  return policy;
}

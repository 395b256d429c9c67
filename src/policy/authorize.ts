/**
 * The gateway's authorize hook as the policy fills it (gateway/call-pipeline.ts `Authorize`): the
 * agent's rules first (deny-first; `tools/list` asks only this), then, for a `tools/call`, its
 * quotas, counted only when a limit applies. Refusals carry `denied` or `rate_limited` as their
 * code: the receipt's status.
 */
import type { Authorization, Authorize, AuthorizeInput } from '../../gateway/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { QuotaCounters } from './counters.ts';
import { quotaPlan } from './quotas.ts';
import type { AnnotationsLookup } from './rules.ts';
import type { PolicyState } from './state.ts';

const ALLOWED: Authorization = { allowed: true };

/** What the hook is built from. */
export interface PolicyAuthorizerOptions {
  state: PolicyState;
  counters: QuotaCounters;
  /** Prefix of the counters' keys (the deployment's rate-limit prefix). */
  keyPrefix: string;
  clock: Clock;
  log: Logger;
}

/** Builds the hook (createPolicy composes it); says once, at start, when quotas are counted per instance. */
export function authorizeWith(options: PolicyAuthorizerOptions): Authorize {
  const { state, counters, clock } = options;
  const prefix = `${options.keyPrefix}quota:`;
  if (!counters.shared)
    options.log.info(
      'agent quotas and provider limits are counted per instance (no REDIS_URL): with several instances, each enforces its own count',
    );

  const rulesSay = async (input: AuthorizeInput) => {
    const policy = await state.agent(input.identity.agentId);
    // An agent gone from the database (deleted meanwhile) keeps nothing: its credential fails next.
    if (!policy) return { policy, decision: ALLOWED };
    let annotations: AnnotationsLookup | undefined = input.annotations;
    if (annotations === undefined && policy.rules.needsAnnotations) {
      const known = await state.toolAnnotations(input.provider, input.tool);
      annotations = () => known;
    }
    const decision = policy.rules.decide(input.provider, input.tool, annotations);
    return {
      policy,
      decision: decision.allowed ? ALLOWED : ({ allowed: false, code: 'denied', reason: decision.reason } as const),
    };
  };

  return async (input) => {
    const { policy, decision } = await rulesSay(input);
    if (!decision.allowed || input.method !== 'tools/call' || !policy) return decision;
    const { identity, provider } = input;
    const declared = await state.providerLimits(provider);
    const now = clock.now();
    const plan = quotaPlan(
      prefix,
      identity,
      provider,
      { agent: policy.document.limits, who: policy.who, account: policy.ceiling, provider: declared },
      now,
    );
    if (!plan) return ALLOWED;
    const at = await counters.consume(plan.slots, now);
    if (at === -1) return ALLOWED;
    const retryAfterS = Math.max(1, Math.ceil((plan.slots[at]!.resetAt - now) / 1000));
    return {
      allowed: false,
      code: 'rate_limited',
      reason: `rate limited: ${plan.labels[at]!} is reached`,
      retryAfterS,
    };
  };
}

/**
 * The human text of `plaza agents policy show`: the agent's own policy, the one the gateway applies
 * (with the account default and ceiling folded in) and the calls counted against each limit.
 */
import type { PolicyDocument, PolicyRule, PolicyWindowLimits } from './policy-flags.ts';

/** One window of a usage answer: calls counted, the limit (null: none) and when the count restarts. */
export interface UsageWindow {
  used: number;
  limit: number | null;
  resets_at?: string | null;
}

/** The `data` of `GET /api/agents/:id/policy`. */
export interface PolicyAnswer {
  policy: PolicyDocument | null;
  effective: PolicyDocument;
  usage?: {
    minute?: UsageWindow;
    day?: UsageWindow;
    per_provider?: Record<string, { minute?: UsageWindow; day?: UsageWindow }>;
  };
}

/** What `show` names the agent by. */
export interface AgentName {
  id: string;
  agin_id?: string;
  display_name?: string;
}

function ruleLine(rule: PolicyRule): string {
  const when = Object.entries(rule.annotations ?? {})
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(', ');
  return `  ${rule.effect.padEnd(5)}  ${rule.provider}/${rule.tool}${when ? `  when ${when}` : ''}`;
}

function windows(limits: PolicyWindowLimits): string {
  const parts = [
    limits.per_minute !== undefined ? `${limits.per_minute} per minute` : '',
    limits.per_day !== undefined ? `${limits.per_day} per day` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** The lines of one policy document. */
export function policyLines(policy: PolicyDocument): string[] {
  const lines = [`  default: ${policy.default ?? '(not set: deny when an allow rule exists, else allow)'}`];
  if (policy.rules.length === 0) lines.push('  rules:   none');
  else lines.push(`  rules (any matching deny refuses, then allow):`, ...policy.rules.map((r) => `  ${ruleLine(r)}`));
  const limits = policy.limits ?? {};
  lines.push(`  limits:  ${windows(limits)}`);
  for (const [provider, own] of Object.entries(limits.per_provider ?? {}))
    lines.push(`           ${provider}: ${windows(own)}`);
  return lines;
}

/** `today: 42 / 100, 58 left (resets …)`, or `this minute: 3 calls, no limit`; `resets` only where asked. */
function usageWindow(name: string, w: UsageWindow | undefined, resets = true): string {
  if (!w) return `${name}: -`;
  const when = resets && w.resets_at ? ` (resets ${w.resets_at})` : '';
  if (w.limit === null) return `${name}: ${w.used} calls, no limit${when}`;
  return `${name}: ${w.used} / ${w.limit}, ${Math.max(0, w.limit - w.used)} left${when}`;
}

/** `show`'s whole text. */
export function policyText(agent: AgentName, answer: PolicyAnswer): string {
  const name = agent.display_name ? `${agent.display_name} (${agent.id})` : agent.id;
  const lines = [`Agent ${name}${agent.agin_id ? `, AGIN ${agent.agin_id}` : ''}`];
  if (answer.policy) lines.push('Own policy:', ...policyLines(answer.policy));
  else lines.push('Own policy: none (the account default applies)');
  lines.push('Applied by the gateway:', ...policyLines(answer.effective));
  const usage = answer.usage ?? {};
  lines.push('Usage:', `  ${usageWindow('this minute', usage.minute)}`, `  ${usageWindow('today', usage.day)}`);
  for (const [provider, u] of Object.entries(usage.per_provider ?? {}))
    lines.push(`  ${provider}: ${usageWindow('minute', u.minute, false)}; ${usageWindow('day', u.day, false)}`);
  return lines.join('\n');
}

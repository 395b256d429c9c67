/**
 * A policy's rules compiled once into matchers, and the decision they give for one tool:
 * deny-first (any matching deny refuses, naming the first), then allow, then the default.
 */
import type { PolicyDocument, PolicyRule } from './document.ts';
import { compileGlob, type GlobMatcher } from './glob.ts';

/** What the rules say about one tool. */
export type RuleDecision = { allowed: true } | { allowed: false; reason: string };

/** The annotations of a tool, looked up only when a rule needs them. */
export type AnnotationsLookup = () => Readonly<Record<string, unknown>> | undefined;

/** Compiled rules: a decision per (provider, tool), plain answers remembered. */
export interface CompiledRules {
  /** `who` names the policy in a refusal ("the agent's policy", "the account's default policy"). */
  decide(provider: string, tool: string, annotations?: AnnotationsLookup): RuleDecision;
  /** Whether any rule looks at annotations (an entry point that knows none may need to look them up). */
  readonly needsAnnotations: boolean;
}

interface Compiled {
  index: number;
  deny: boolean;
  provider: GlobMatcher;
  tool: GlobMatcher;
  annotations: [string, unknown][] | undefined;
  label: string;
}

const ALLOWED: RuleDecision = { allowed: true };
/** Most (provider, tool) decisions one policy remembers. */
const MEMO_LIMIT = 4_096;

/**
 * MCP's defaults for the four hints (2025-06-18 and later): a tool that says nothing is taken as
 * not read-only, destructive (unless read-only), not idempotent, open-world. A rule "no
 * destructiveHint tools" thus also refuses tools that do not say they are harmless.
 */
function annotationValue(annotations: Readonly<Record<string, unknown>> | undefined, key: string): unknown {
  const value = annotations?.[key];
  if (value !== undefined) return value;
  switch (key) {
    case 'readOnlyHint':
      return false;
    case 'destructiveHint':
      return annotations?.['readOnlyHint'] !== true;
    case 'idempotentHint':
      return false;
    case 'openWorldHint':
      return true;
    default:
      return undefined;
  }
}

function label(rule: PolicyRule, index: number): string {
  const when = rule.annotations
    ? ` when ${Object.entries(rule.annotations)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(', ')}`
    : '';
  return `rules[${index}] (${rule.effect} ${rule.provider}/${rule.tool}${when})`;
}

/** Compiles the rules of `doc`; `who` names the policy in refusals. */
export function compileRules(doc: PolicyDocument, defaultEffect: 'allow' | 'deny', who: string): CompiledRules {
  const rules: Compiled[] = doc.rules.map((rule, index) => ({
    index,
    deny: rule.effect === 'deny',
    provider: compileGlob(rule.provider),
    tool: compileGlob(rule.tool),
    annotations: rule.annotations ? Object.entries(rule.annotations) : undefined,
    label: label(rule, index),
  }));
  const plain = rules.filter((r) => !r.annotations);
  const conditional = rules.filter((r) => r.annotations);
  const plainDeny = plain.filter((r) => r.deny);
  const plainAllow = plain.filter((r) => !r.deny);
  /** The first plain deny and whether a plain allow matches, remembered per name. */
  const memo = new Map<string, { deny: Compiled | undefined; allow: boolean }>();
  const plainMatch = (provider: string, tool: string) => {
    const key = `${provider}\u0000${tool}`;
    let hit = memo.get(key);
    if (hit === undefined) {
      const matches = (r: Compiled) => r.provider(provider) && r.tool(tool);
      hit = { deny: plainDeny.find(matches), allow: plainAllow.some(matches) };
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, hit);
    }
    return hit;
  };
  const refused = (rule: Compiled): RuleDecision => ({ allowed: false, reason: `denied by ${who}: ${rule.label}` });

  return {
    needsAnnotations: conditional.length > 0,
    decide(provider, tool, lookup) {
      const plainHit = plainMatch(provider, tool);
      let deny = plainHit.deny;
      let allow = plainHit.allow;
      if (conditional.length > 0) {
        let annotations: Readonly<Record<string, unknown>> | undefined;
        let looked = false;
        for (const rule of conditional) {
          if ((rule.deny ? deny !== undefined && deny.index < rule.index : allow) || !rule.provider(provider)) continue;
          if (!rule.tool(tool)) continue;
          if (!looked) {
            annotations = lookup?.();
            looked = true;
          }
          if (!rule.annotations!.every(([key, value]) => annotationValue(annotations, key) === value)) continue;
          if (rule.deny) deny = rule;
          else allow = true;
        }
      }
      if (deny) return refused(deny);
      if (allow || defaultEffect === 'allow') return ALLOWED;
      return { allowed: false, reason: `denied by ${who}: no rule allows ${provider}/${tool} (default deny)` };
    },
  };
}

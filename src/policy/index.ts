/**
 * Who may call what (issue 35): agent policies (allow/deny rules over providers, tools and tool
 * annotations), quotas per agent, per agent × provider and per account, provider-declared per-AGIN
 * limits, the gateway's authorize hook that enforces them, and the service behind their API.
 */
export { policyComponents, policyOperations, policySecuritySchemes } from './contract.ts';
export type { Policy, PolicyOptions } from './create-policy.ts';
export { createPolicy } from './create-policy.ts';
export type { AccountPolicy, PolicyDocument, PolicyRule, WindowLimits } from './document.ts';
export {
  AccountPolicySchema,
  AginLimitsSchema,
  MAX_RULES,
  parsePolicyInput,
  PolicyDocumentSchema,
  PolicyRuleSchema,
  WindowLimitsSchema,
} from './document.ts';
export type { GlobMatcher } from './glob.ts';
export { compileGlob } from './glob.ts';
export type { CompiledRules, RuleDecision } from './rules.ts';
export { compileRules } from './rules.ts';
export type { AccountPolicyView, AgentPolicyView, AgentUsage, PolicyService, WindowUsage } from './service.ts';

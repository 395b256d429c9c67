/** Agents, their AGIN cards and gateway credentials. */
export type { AgentAccessTokens, AgentService, AgentServiceOptions, AgentView } from './agent-service.ts';
export { AGENT_NAME_MAX, CreateAgentSchema, createAgentService, storedCard } from './agent-service.ts';
export { looksLikeAgentToken, mintAgentToken } from './agent-tokens.ts';

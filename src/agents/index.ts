/** Agents, their AGIN cards and gateway credentials. */
export type { AgentView } from './agent-card.ts';
export { AGENT_NAME_MAX, CreateAgentSchema, storedCard } from './agent-card.ts';
export type { AgentAccessTokens } from './agent-credentials.ts';
export type { AgentService, AgentServiceOptions } from './agent-service.ts';
export { createAgentService } from './agent-service.ts';
export { looksLikeAgentToken, mintAgentToken } from './agent-tokens.ts';

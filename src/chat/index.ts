/**
 * OpenAI-compatible chat for the token API: request schema, model registry, the embedded
 * retrieval assistant and the upstream proxy, limits and usage accounting.
 */
export type { AgentsDirectory, AgentView } from './agents-directory.ts';
export { createAgentsDirectory, SITE_ASSISTANT } from './agents-directory.ts';
export { builtinKnowledge } from './builtin-knowledge.ts';
export { catalogKnowledge } from './catalog-knowledge.ts';
export type { ChatAdmission, ChatLimits, ChatLimitSettings } from './chat-limits.ts';
export { createChatLimits } from './chat-limits.ts';
export type { ChatInput, ChatOutcome, ChatService, ChatServiceOptions } from './chat-service.ts';
export { createChatService } from './chat-service.ts';
export { createEmbeddedBackend } from './embedded-backend.ts';
export type { AssistantLocale, KnowledgeDoc, KnowledgeSource } from './knowledge.ts';
export { cachedSource, combineSources, normaliseLocale, websiteContentSource } from './knowledge.ts';
export type { ModelEntry, ModelRegistry } from './models.ts';
export { createModelRegistry, EMBEDDED_MODEL } from './models.ts';
export { search, terms } from './retrieval.ts';
export type { ChatMessage, ChatRequest } from './schema.ts';
export { CHAT_ROLES, chatRequestParser, chatRequestSchema, MAX_MESSAGES, paramOf, parseChatRequest } from './schema.ts';
export { readSseData, sseEvent } from './sse.ts';
export { countPromptTokens, countTokens, splitTokens, TokenCounter } from './tokenizer.ts';
export type {
  BackendCall,
  ChatBackend,
  CompletionResult,
  CompletionStream,
  StreamControl,
  StreamSink,
  Usage,
} from './types.ts';
export type { UpstreamOptions } from './upstream-backend.ts';
export { createUpstreamBackend } from './upstream-backend.ts';
export type { UsageLog, UsageRecord } from './usage.ts';
export { createUsageLog } from './usage.ts';

import type { Logger } from '../log/index.ts';
import type { Principal } from '../tokens/index.ts';
import { requireScope } from '../tokens/index.ts';
import type { ChatLimits } from './chat-limits.ts';
import type { ModelEntry, ModelRegistry } from './models.ts';
import { chatRequestParser } from './schema.ts';
import type { BackendCall, ChatBackend, Usage } from './types.ts';
import type { UsageLog } from './usage.ts';

/** One chat completion request as the HTTP edge hands it over. */
export interface ChatInput {
  body: unknown;
  principal: Principal;
  /** The client's address key (see src/rate-limit clientAddress). */
  ip: string;
  requestId: string;
  /** `Accept-Language`, a hint for the embedded assistant. */
  locale: string | undefined;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** What to answer: a JSON body, or SSE `data:` payloads to write as they come. */
export type ChatOutcome =
  | { kind: 'json'; headers: Record<string, string>; body: Record<string, unknown> }
  | { kind: 'stream'; headers: Record<string, string>; events: AsyncIterable<string> };

/** The token API's chat: validation, limits, backend choice, usage accounting. */
export interface ChatService {
  /** Models the principal may use (every principal may use every model today). */
  models(principal: Principal): ModelEntry[];
  complete(input: ChatInput): Promise<ChatOutcome>;
}

/** Options of {@link createChatService}. */
export interface ChatServiceOptions {
  registry: ModelRegistry;
  backends: { embedded: ChatBackend; upstream?: ChatBackend | undefined };
  limits: ChatLimits;
  usage: UsageLog;
  log: Logger;
  /** Cap of `max_tokens` (400 above it) and the budget when a request sets none. */
  maxTokens: number;
}

/** Creates the chat service. */
export function createChatService(options: ChatServiceOptions): ChatService {
  const { registry, backends, limits, usage, log, maxTokens } = options;
  if (registry.list().some((m) => m.backend === 'upstream') && !backends.upstream) throw new Error('Upstream models need an upstream backend');
  const parse = chatRequestParser(maxTokens);

  /** Records usage and charges the budgets; never awaited on the hot path, failures are logged. */
  async function account(input: ChatInput, model: string, used: Usage | undefined): Promise<void> {
    if (!used) return;
    const { principal } = input;
    await Promise.all([
      usage.record({ subject: principal.subject, subjectType: principal.kind, model, usage: used, requestId: input.requestId }),
      limits.spend(principal.subject, input.ip, used.total_tokens),
    ]).catch((error: unknown) => log.error({ err: error, request_id: input.requestId }, 'could not record chat usage'));
  }

  return {
    models: () => registry.list(),

    async complete(input) {
      requireScope(input.principal, 'chat');
      const request = parse(input.body);
      const model = registry.resolve(request.model);
      const headers = await limits.admit(input.principal.subject, input.ip);
      const backend = model.backend === 'upstream' ? backends.upstream! : backends.embedded;
      const call: BackendCall = { request, backendModel: model.target, locale: input.locale, signal: input.signal };
      if (request.stream !== true) {
        const result = await backend.complete(call);
        void account(input, model.id, result.usage);
        return { kind: 'json', headers, body: result.body };
      }
      const stream = await backend.stream(call);
      async function* events(): AsyncGenerator<string> {
        try {
          yield* stream.events;
        } finally {
          void account(input, model.id, stream.usage());
        }
      }
      return { kind: 'stream', headers, events: events() };
    },
  };
}

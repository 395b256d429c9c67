import { ValidationError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { Principal } from '../tokens/index.ts';
import { requireScope } from '../tokens/index.ts';
import type { ChatAdmission, ChatLimits } from './chat-limits.ts';
import type { ModelEntry, ModelRegistry } from './models.ts';
import { type ChatRequest, chatRequestParser, completionBudget } from './schema.ts';
import { countPromptTokens } from './tokenizer.ts';
import type { BackendCall, ChatBackend, CompletionStream, Usage } from './types.ts';
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

/** What to answer: a JSON body, or a stream whose SSE `data:` payloads are written as they come (see CompletionStream). */
export type ChatOutcome =
  | { kind: 'json'; headers: Record<string, string>; body: Record<string, unknown> }
  | { kind: 'stream'; headers: Record<string, string>; stream: CompletionStream };

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
  if (registry.list().some((m) => m.backend === 'upstream') && !backends.upstream)
    throw new Error('Upstream models need an upstream backend');
  const parse = chatRequestParser(maxTokens);

  /** Records usage and settles the budgets' reservation; never awaited on the hot path, failures are logged. */
  async function account(
    input: ChatInput,
    admission: ChatAdmission,
    model: string,
    used: Usage | undefined,
  ): Promise<void> {
    const { principal } = input;
    await Promise.all([
      used
        ? usage.record({
            subject: principal.subject,
            subjectType: principal.kind,
            model,
            usage: used,
            requestId: input.requestId,
          })
        : undefined,
      admission.settle(used?.total_tokens ?? 0),
    ]).catch((error: unknown) => log.error({ err: error, request_id: input.requestId }, 'could not record chat usage'));
  }

  return {
    models: () => registry.list(),

    async complete(input) {
      requireScope(input.principal, 'chat');
      // Requests to an upstream model pass through whatever OpenAI fields the upstream understands.
      const request = parse(input.body, (name) => registry.resolve(name).backend === 'upstream');
      const model = registry.resolve(request.model);
      const backend = model.backend === 'upstream' ? backends.upstream! : backends.embedded;
      // A request without max_tokens may use what its backend gives one (the embedded assistant's
      // answers are short), and its reservation holds no more of the day's budget than that.
      const perChoice = completionBudget(request, Math.min(maxTokens, backend.defaultMaxTokens ?? maxTokens));
      // The most this request may use: its prompt (about 3 characters a token, on the safe side)
      // and the completion budget of each choice. Settled with the real usage once the answer is done.
      const prompt = request.messages.reduce((sum, m) => sum + 4 + Math.ceil(m.content.length / 3), 3);
      const choices = request.n ?? 1;
      const reserve = prompt + perChoice * choices;
      // A budget is checked before a request, and its reservation may take it past the budget by
      // that request's share; a request that alone may use more than a whole day's budget (n up
      // to 128 times max_tokens) would make that share unbounded, and could never fit anyway.
      // Its prompt is counted as the usage will be (the reservation's 3 characters a token is
      // generous on purpose, and would refuse prompts that fit).
      if (reserve > limits.largestReservation) {
        const promptTokens = countPromptTokens(request.messages);
        if (promptTokens + perChoice * choices > limits.largestReservation) {
          throw budgetTooSmall(request, {
            promptTokens,
            perChoice,
            choices,
            budget: limits.largestReservation,
            cap: maxTokens,
          });
        }
      }
      const admission = await limits.admit(input.principal.subject, input.ip, reserve);
      const { headers } = admission;
      const call: BackendCall = { request, backendModel: model.target, locale: input.locale, signal: input.signal };
      // A backend that fails before answering used nothing: the reservation is given back. Except
      // when the client left while the upstream worked on it: the upstream read the prompt (and
      // bills it), so the prompt is charged, as for a stream the client leaves.
      const refundOnFailure = <T>(work: Promise<T>): Promise<T> =>
        work.catch((error: unknown) => {
          const prompt = countPromptTokens(request.messages);
          // eslint-disable-next-line @typescript-eslint/no-floating-promises -- account catches and logs
          void account(
            input,
            admission,
            model.id,
            input.signal.aborted && model.backend === 'upstream'
              ? { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt }
              : undefined,
          );
          throw error;
        });
      if (request.stream !== true) {
        const result = await refundOnFailure(backend.complete(call));
        // eslint-disable-next-line @typescript-eslint/no-floating-promises -- account catches and logs
        void account(input, admission, model.id, result.usage);
        return { kind: 'json', headers, body: result.body };
      }
      const stream = await refundOnFailure(backend.stream(call));
      return {
        kind: 'stream',
        headers,
        stream: {
          usage: stream.usage,
          start: (sink) =>
            stream.start({
              events: (batch) => sink.events(batch),
              end(error) {
                // eslint-disable-next-line @typescript-eslint/no-floating-promises -- account catches and logs
                void account(input, admission, model.id, stream.usage());
                sink.end(error);
              },
            }),
        },
      };
    },
  };
}

/**
 * The 400 for a request that may use more than a whole day's token budget, naming what to lower:
 * the messages when the prompt alone is too long, else n (several choices), else the completion
 * limit the request set (max_completion_tokens wins over max_tokens) or, unset, max_tokens.
 */
function budgetTooSmall(
  request: Pick<ChatRequest, 'max_tokens' | 'max_completion_tokens'>,
  figures: { promptTokens: number; perChoice: number; choices: number; budget: number; cap: number },
): ValidationError {
  const { promptTokens, perChoice, choices, budget, cap } = figures;
  const limit = (request.max_completion_tokens ?? undefined) !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const unset = (request.max_completion_tokens ?? request.max_tokens ?? undefined) === undefined;
  const [param, advice] =
    promptTokens > budget
      ? ['messages', 'shorten the messages']
      : choices > 1
        ? ['n', `lower n or ${limit}`]
        : [limit, `lower ${limit}`];
  const total = promptTokens + perChoice * choices;
  return new ValidationError(
    `This request may use up to about ${total} tokens (its prompt, about ${promptTokens}, and ${perChoice} for each of its ${choices} ${choices === 1 ? 'choice' : 'choices'}${unset ? `: ${limit} is unset, so ${cap}` : ''}), more than a whole day's token budget of ${budget}; ${advice}.`,
    { param },
  );
}

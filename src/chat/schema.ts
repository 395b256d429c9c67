import { z } from 'zod';

import { ValidationError } from '../kernel/index.ts';

/** Roles a request may carry (spec §2.16: system and user; assistant for earlier turns). */
export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

/** Most messages one request may carry. */
export const MAX_MESSAGES = 256;

const TextPartSchema = z.strictObject({ type: z.literal('text'), text: z.string() });

const MessageSchema = z.strictObject({
  role: z.enum(CHAT_ROLES),
  // OpenAI clients may send text as an array of parts; only text parts are understood.
  content: z.union([z.string(), z.array(TextPartSchema).min(1)]),
  name: z.string().max(64).optional(),
});

/**
 * `POST /api/v1/chat/completions` (spec §2.16), the OpenAI fields Plaza understands. Strict: any
 * other field is a 400 naming it, as OpenAI itself answers unrecognised arguments.
 */
export function chatRequestSchema(maxTokensCap: number) {
  const maxTokens = z.number().int().min(1).max(maxTokensCap);
  return z.strictObject({
    model: z.string().min(1).max(200),
    messages: z.array(MessageSchema).min(1).max(MAX_MESSAGES),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    max_tokens: maxTokens.nullish(),
    max_completion_tokens: maxTokens.nullish(),
    n: z.literal(1).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.strictObject({ include_usage: z.boolean().optional() }).nullish(),
    stop: z.union([z.string().max(200), z.array(z.string().max(200)).max(4)]).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    seed: z.number().int().nullish(),
    user: z.string().max(256).nullish(),
  });
}

type RawChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;

/** One message, content flattened to text. */
export interface ChatMessage {
  role: (typeof CHAT_ROLES)[number];
  content: string;
  name?: string;
}

/** A validated chat request; OpenAI field names kept so it can be forwarded as-is. */
export type ChatRequest = Omit<RawChatRequest, 'messages'> & { messages: ChatMessage[] };

/** Parses a request body; a failure is a 400 whose `param` names the first field at fault. */
export function parseChatRequest(body: unknown, maxTokensCap: number): ChatRequest {
  return chatRequestParser(maxTokensCap)(body);
}

/**
 * A parser with its schema built once: zod compiles a schema on first use, and compiling one per
 * request cost more than the parse itself.
 */
export function chatRequestParser(maxTokensCap: number): (body: unknown) => ChatRequest {
  const schema = chatRequestSchema(maxTokensCap);
  return (body) => parseWith(schema, body, maxTokensCap);
}

function parseWith(schema: ReturnType<typeof chatRequestSchema>, body: unknown, maxTokensCap: number): ChatRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('Request body must be a JSON object with "model" and "messages".', { param: null });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
    const param = paramOf(path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `Unrecognized request argument supplied: ${param}`
        : `Invalid value for '${param}': ${issue.message}${param.endsWith('max_tokens') ? ` (an integer from 1 to ${maxTokensCap})` : ''}`;
    throw new ValidationError(message, { param, details: parsed.error.issues.slice(0, 5).map((i) => ({ param: paramOf(i.path), message: i.message })) });
  }
  const messages = parsed.data.messages.map((m): ChatMessage => {
    const content = typeof m.content === 'string' ? m.content : m.content.map((part) => part.text).join('');
    return m.name === undefined ? { role: m.role, content } : { role: m.role, content, name: m.name };
  });
  return { ...parsed.data, messages };
}

/** `['messages', 0, 'role']` -> `messages[0].role`. */
export function paramOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The completion budget of a request: `max_completion_tokens`, else `max_tokens`, else `fallback`. */
export function completionBudget(request: ChatRequest, fallback: number): number {
  return request.max_completion_tokens ?? request.max_tokens ?? fallback;
}

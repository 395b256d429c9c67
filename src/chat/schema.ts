import { z } from 'zod';

import { openAiParam, ValidationError } from '../kernel/index.ts';

/**
 * Roles a request to the embedded assistant may carry (spec §2.16: system and user; assistant for
 * earlier turns; developer, OpenAI's newer name for system).
 */
export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant'] as const;

/** Most messages one request may carry. */
export const MAX_MESSAGES = 256;

const TextPartSchema = z.strictObject({
  type: z.literal('text', {
    error:
      'plaza-assistant reads text parts only ({"type":"text","text":"…"}); images and other parts need an upstream model',
  }),
  text: z.string(),
});

const MessageSchema = z.strictObject({
  role: z.enum(CHAT_ROLES),
  // OpenAI clients may send text as an array of parts; only text parts are understood.
  content: z.union([z.string(), z.array(TextPartSchema).min(1)], {
    error: 'expected a string or an array of text parts ({"type":"text","text":"…"})',
  }),
  name: z.string().max(64).optional(),
  // What an answer's message carries when a client pushes it back into the conversation, as
  // OpenAI's guides do: `refusal` (OpenAI's assistant message field; the openai client's
  // stream().finalMessage() sets it), `parsed` (its parse() helper), `annotations` (OpenAI's
  // answers). Read by nothing here.
  refusal: z.string().nullish(),
  parsed: z.unknown().optional(),
  annotations: z.array(z.unknown()).optional(),
});

/** An OpenAI function tool definition, as clients declare the tools a model may call. */
const FunctionToolSchema = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a function name is 1-64 letters, digits, _ or -'),
    description: z.string().max(8_192).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const ANSWERS_IN_TEXT = 'plaza-assistant answers in text and calls no tools';

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
    // include_obfuscation: OpenAI pads stream events against side channels when true; the embedded
    // assistant adds no padding, which OpenAI allows (it is a client's wish, not a contract).
    stream_options: z
      .strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
      .nullish(),
    stop: z
      .union([z.string().max(200), z.array(z.string().max(200)).max(4)], {
        error: 'expected a string, or an array of up to 4 strings, each of up to 200 characters',
      })
      .nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    seed: z.number().int().nullish(),
    user: z.string().max(256).nullish(),
    // Tools an agent framework declares on every request (the AI SDK's and LangChain's tool
    // agents): with tool_choice "auto" or "none" a model may always answer in text, which is what
    // the embedded assistant does, so the request is served as OpenAI's models would serve it when
    // they choose no tool. A call it must make ("required", or a named function) it cannot make.
    tools: z.array(FunctionToolSchema).max(128).nullish(),
    tool_choice: z
      .unknown()
      .refine((choice) => choice === 'auto' || choice === 'none', {
        error: `${ANSWERS_IN_TEXT}: tool_choice "auto" or "none" only; a required tool call needs an upstream model`,
      })
      .nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    response_format: z
      .strictObject({
        type: z.literal('text', {
          error: `${ANSWERS_IN_TEXT}: response_format "text" only; JSON output needs an upstream model`,
        }),
      })
      .nullish(),
    logprobs: z
      .literal(false, { error: 'plaza-assistant gives no log probabilities; logprobs needs an upstream model' })
      .nullish(),
  });
}

/**
 * A request to an upstream model: only what Plaza reads itself is checked (the model, the messages'
 * shape, the completion budget, streaming); everything else — `tools`, `tool_choice`,
 * `response_format`, `logprobs`, `n`, `tool` messages, image parts, a server's own extensions —
 * goes upstream as the client sent it, and the upstream judges it (a proxy that refused them
 * would break every agent).
 */
export function upstreamRequestSchema(maxTokensCap: number) {
  const maxTokens = z.number().int().min(1).max(maxTokensCap);
  return z.looseObject({
    model: z.string().min(1).max(200),
    messages: z
      .array(
        z.looseObject({
          role: z.string().min(1).max(64),
          content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
        }),
      )
      .min(1)
      .max(MAX_MESSAGES),
    max_tokens: maxTokens.nullish(),
    max_completion_tokens: maxTokens.nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  });
}

type RawChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;

/** One message, content flattened to text (what Plaza counts and the embedded assistant reads). */
export interface ChatMessage {
  role: string;
  content: string;
  name?: string;
}

/**
 * A validated chat request: the fields Plaza reads, messages as text, and `body`, the request as
 * the client sent it (OpenAI field names), which is what goes upstream.
 */
export type ChatRequest = Pick<RawChatRequest, 'model' | 'max_tokens' | 'max_completion_tokens' | 'n' | 'stream'> &
  Partial<Pick<RawChatRequest, 'stop'>> & {
    messages: ChatMessage[];
    stream_options?: { include_usage?: boolean | undefined } | null | undefined;
    body: Record<string, unknown>;
  };

/**
 * Parses a request body; a failure is a 400 whose `param` names the first field at fault. Strict
 * (the embedded assistant's fields only) unless `upstream`.
 */
export function parseChatRequest(body: unknown, maxTokensCap: number, upstream = false): ChatRequest {
  return chatRequestParser(maxTokensCap)(body, () => upstream);
}

/**
 * A parser with its schemas built once: zod compiles a schema on first use, and compiling one per
 * request cost more than the parse itself. `upstream(model)` tells whether the model named in the
 * body is served by an upstream (it throws for an unknown model).
 */
export function chatRequestParser(
  maxTokensCap: number,
): (body: unknown, upstream: (model: string) => boolean) => ChatRequest {
  const strict = chatRequestSchema(maxTokensCap);
  const loose = upstreamRequestSchema(maxTokensCap);
  return (body, upstream) => {
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ValidationError('Request body must be a JSON object with "model" and "messages".', { param: null });
    }
    // A missing or malformed model is reported by the strict schema, like any other field.
    const model = (body as Record<string, unknown>)['model'];
    const schema = typeof model === 'string' && model !== '' && model.length <= 200 && upstream(model) ? loose : strict;
    return parseWith(schema, body as Record<string, unknown>, maxTokensCap);
  };
}

function parseWith(
  schema: ReturnType<typeof chatRequestSchema> | ReturnType<typeof upstreamRequestSchema>,
  body: Record<string, unknown>,
  maxTokensCap: number,
): ChatRequest {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = innermost(parsed.error.issues[0]!);
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
    const param = paramOf(path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `Unrecognized request argument supplied: ${param}`
        : `Invalid value for '${param}': ${issue.message}${param.endsWith('max_tokens') ? ` (an integer from 1 to ${maxTokensCap})` : ''}`;
    throw new ValidationError(message, {
      param,
      details: parsed.error.issues.slice(0, 5).map((i) => ({ param: paramOf(i.path), message: i.message })),
    });
  }
  const messages = parsed.data.messages.map((m: Record<string, unknown>): ChatMessage => {
    const content = messageText(m);
    return typeof m['name'] === 'string'
      ? { role: m['role'] as string, content, name: m['name'] }
      : { role: m['role'] as string, content };
  });
  return { ...(parsed.data as Omit<ChatRequest, 'messages' | 'body'>), messages, body };
}

/**
 * The issue to report: for a union (a message's content) whose value had the type of one option
 * but not its shape (an array of parts with an image part), that option's first issue, under the
 * full path (`messages[0].content[1].type`); otherwise the issue itself.
 */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const deeper = issue.errors.find((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
  return deeper ? { ...deeper[0]!, path: [...issue.path, ...deeper[0]!.path] } : issue;
}

/**
 * The text of a message as Plaza counts it: its content (text parts joined; images and other
 * parts are left to the upstream's usage) and the names and arguments of its tool calls.
 */
function messageText(message: Record<string, unknown>): string {
  const { content, tool_calls: toolCalls } = message;
  let text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : '')).join('')
        : '';
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls as { function?: { name?: unknown; arguments?: unknown } }[]) {
      if (typeof call?.function?.name === 'string') text += ` ${call.function.name}`;
      if (typeof call?.function?.arguments === 'string') text += call.function.arguments;
    }
  }
  return text;
}

/** `['messages', 0, 'role']` -> `messages[0].role` (the kernel's {@link openAiParam}, shared with the HTTP edge's NUL check). */
export const paramOf = openAiParam;

/** The completion budget of one choice: `max_completion_tokens`, else `max_tokens`, else `fallback`. */
export function completionBudget(
  request: Pick<ChatRequest, 'max_tokens' | 'max_completion_tokens'>,
  fallback: number,
): number {
  return request.max_completion_tokens ?? request.max_tokens ?? fallback;
}

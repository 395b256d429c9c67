import { type Clock, randomToken } from '../kernel/index.ts';
import { type AssistantLocale, type KnowledgeSource, normaliseLocale } from './knowledge.ts';
import { type Hit, search } from './retrieval.ts';
import { completionBudget } from './schema.ts';
import { streamOfBatches } from './stream.ts';
import { countPromptTokens, splitTokens } from './tokenizer.ts';
import type { BackendCall, ChatBackend, CompletionStream, Usage } from './types.ts';

const TEXT = {
  en: {
    intro:
      "I'm Plaza's embedded assistant: I answer by searching Plaza's own content (products, plans, MCP tools, packages), without a large language model.",
    found: 'Here is what I found:',
    none: "I found nothing about that in Plaza's content. You can ask about the MCP marketplace, AGIN identity and receipts, AGPK packages, plans, the website API or the token API.",
    more: 'More',
  },
  'zh-CN': {
    intro:
      '我是 Plaza 的内置助手：我通过检索 Plaza 自己的内容（产品、方案、MCP 工具、软件包）来回答，没有使用大语言模型。',
    found: '我找到了以下内容：',
    none: '我在 Plaza 的内容中没有找到相关信息。你可以询问 MCP 市场、AGIN 身份与回执、AGPK 软件包、方案、网站 API 或令牌 API。',
    more: '详情',
  },
} as const;

/**
 * The embedded `plaza-assistant` model: retrieval over Plaza's own content in the language of
 * the question, composed into an answer that says what it is. Deterministic; counts tokens with
 * the documented approximation (src/chat/tokenizer.ts).
 */
export function createEmbeddedBackend(deps: {
  knowledge: KnowledgeSource;
  clock: Clock;
  defaultMaxTokens: number;
}): ChatBackend {
  async function answer(call: BackendCall): Promise<{ text: string; finish: 'stop' | 'length'; usage: Usage }> {
    const users = call.request.messages.filter((m) => m.role === 'user').map((m) => m.content);
    const last = users.at(-1) ?? '';
    const locale: AssistantLocale = /[\p{Script=Han}]/u.test(last)
      ? 'zh-CN'
      : /[a-z]{2}/i.test(last)
        ? 'en'
        : normaliseLocale(call.locale);
    const docs = await deps.knowledge.documents(locale);
    let hits = search(docs, last);
    // Multi-turn: a short follow-up ("and the price?") is searched together with the previous question.
    if (hits.length === 0 && users.length > 1) hits = search(docs, users.slice(-2).join(' '));
    let text = compose(locale, hits);
    let finish: 'stop' | 'length' = 'stop';
    for (const stop of stopsOf(call.request.stop)) {
      const at = text.indexOf(stop);
      if (at >= 0) text = text.slice(0, at);
    }
    const budget = completionBudget(call.request, deps.defaultMaxTokens);
    const pieces = splitTokens(text);
    let used = 0;
    let cut = pieces.length;
    for (let i = 0; i < pieces.length; i++) {
      const cost = /\S/.test(pieces[i]!) ? 1 : 0;
      if (used + cost > budget) {
        cut = i;
        finish = 'length';
        break;
      }
      used += cost;
    }
    if (finish === 'length') text = pieces.slice(0, cut).join('');
    const prompt = countPromptTokens(call.request.messages);
    return { text, finish, usage: { prompt_tokens: prompt, completion_tokens: used, total_tokens: prompt + used } };
  }

  return {
    defaultMaxTokens: deps.defaultMaxTokens,

    async complete(call) {
      const { text, finish, usage } = await answer(call);
      return {
        usage,
        body: {
          id: `chatcmpl-${randomToken(12)}`,
          object: 'chat.completion',
          created: Math.floor(deps.clock.now() / 1000),
          model: call.request.model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: finish }],
          usage,
        },
      };
    },

    async stream(call): Promise<CompletionStream> {
      const { text, finish, usage } = await answer(call);
      const includeUsage = call.request.stream_options?.include_usage === true;
      const base = {
        id: `chatcmpl-${randomToken(12)}`,
        object: 'chat.completion.chunk',
        created: Math.floor(deps.clock.now() / 1000),
        model: call.request.model,
      };
      const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
        JSON.stringify({
          ...base,
          choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
          ...(includeUsage ? { usage: null } : {}),
        });
      // A chunk a batch: the assistant's text streams piece by piece, as a model's would.
      async function* events(): AsyncGenerator<string[]> {
        yield [chunk({ role: 'assistant', content: '' }, null)];
        for (const piece of splitTokens(text)) {
          if (call.signal.aborted) return;
          yield [chunk({ content: piece }, null)];
        }
        yield [chunk({}, finish)];
        if (includeUsage) yield [JSON.stringify({ ...base, choices: [], usage })];
        yield ['[DONE]'];
      }
      return streamOfBatches(events, () => usage, call.signal);
    },
  };
}

function compose(locale: AssistantLocale, hits: readonly Hit[]): string {
  const t = TEXT[locale];
  if (hits.length === 0) return `${t.intro}\n\n${t.none}`;
  const lines = hits.map(
    (hit) => `- **${hit.doc.title}**: ${hit.excerpt}${hit.doc.link ? ` (${t.more}: ${hit.doc.link})` : ''}`,
  );
  return `${t.intro} ${t.found}\n\n${lines.join('\n')}`;
}

function stopsOf(stop: string | string[] | null | undefined): string[] {
  if (stop === undefined || stop === null) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s !== '');
}

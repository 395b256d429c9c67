/**
 * Pins the pure parts of the token API's chat: request validation and its `param`, the documented
 * token approximation, retrieval over Plaza's content, SSE parsing, the model registry, and scopes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  builtinKnowledge,
  countPromptTokens,
  countTokens,
  createModelRegistry,
  normaliseLocale,
  parseChatRequest,
  readSseData,
  search,
  splitTokens,
  websiteContentSource,
} from '../../src/chat/index.ts';
import { ForbiddenError, ValidationError } from '../../src/kernel/index.ts';
import { requireScope } from '../../src/tokens/index.ts';

const ok = { model: 'plaza-assistant', messages: [{ role: 'user', content: 'hi' }] };

function paramOf(body: unknown): string | null {
  try {
    parseChatRequest(body, 4096);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).param;
  }
  throw new Error('expected a ValidationError');
}

describe('parseChatRequest', () => {
  it('accepts a minimal OpenAI request and flattens text parts', () => {
    const parsed = parseChatRequest(
      {
        ...ok,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      },
      4096,
    );
    expect(parsed.messages).toEqual([{ role: 'user', content: 'ab' }]);
  });

  it.each([
    ['missing messages', { model: 'm' }, 'messages'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['a tool role', { ...ok, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    ['a non-string content', { ...ok, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    ['a string temperature', { ...ok, temperature: 'hot' }, 'temperature'],
    ['temperature above 2', { ...ok, temperature: 2.5 }, 'temperature'],
    ['huge max_tokens', { ...ok, max_tokens: 10_000_000 }, 'max_tokens'],
    ['fractional max_tokens', { ...ok, max_tokens: 1.5 }, 'max_tokens'],
    ['n above 1', { ...ok, n: 3 }, 'n'],
    ['an unknown field', { ...ok, functions: [] }, 'functions'],
    ['an unknown stream option', { ...ok, stream: true, stream_options: { foo: 1 } }, 'stream_options.foo'],
    ['a missing model', { messages: ok.messages }, 'model'],
  ])('rejects %s with param %s', (_name, body, param) => {
    expect(paramOf(body)).toBe(param);
  });

  it("accepts what the openai client sends back: an answer's message (refusal, parsed, annotations) and include_obfuscation", () => {
    const answer = { role: 'assistant', content: 'Plans: …', refusal: null, parsed: null, annotations: [] };
    const parsed = parseChatRequest(
      {
        ...ok,
        messages: [...ok.messages, answer, { role: 'user', content: 'more' }],
        stream: true,
        stream_options: { include_usage: true, include_obfuscation: false },
      },
      4096,
    );
    expect(parsed.messages.map((m) => m.content)).toEqual(['hi', 'Plans: …', 'more']);
    expect(paramOf({ ...ok, messages: [{ ...answer, refusal: 5 }] })).toBe('messages[0].refusal');
    expect(paramOf({ ...ok, messages: [{ ...answer, audio: { id: 'a' } }] })).toBe('messages[0].audio');
  });

  it.each([
    [
      'an image part',
      [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
      'messages[0].content[1].type',
      /text parts only/,
    ],
    ['null', null, 'messages[0].content', /a string or an array of text parts/],
    ['a number', 5, 'messages[0].content', /a string or an array of text parts/],
  ])('names what is wrong with a content of %s for the embedded assistant', (_name, content, param, message) => {
    let error: ValidationError | undefined;
    try {
      parseChatRequest({ ...ok, messages: [{ role: 'user', content }] }, 4096);
    } catch (e) {
      error = e as ValidationError;
    }
    expect(error?.param).toBe(param);
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toMatch(/Invalid input$/);
  });

  it.each([
    ['five strings', ['a', 'b', 'c', 'd', 'e']],
    ['a number', 5],
  ])('says what a stop of %s should be', (_name, stop) => {
    let error: ValidationError | undefined;
    try {
      parseChatRequest({ ...ok, stop }, 4096);
    } catch (e) {
      error = e as ValidationError;
    }
    expect(error?.param).toBe('stop');
    expect(error?.message).toMatch(/up to 4 strings, each of up to 200 characters/);
  });

  it('rejects a non-object body without a param', () => {
    expect(paramOf([ok])).toBeNull();
  });

  it('keeps a request for an upstream model as sent, and counts tool calls as text', () => {
    const body = {
      model: 'gpt',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: '2' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
      n: 2,
      top_k: 40,
    };
    const parsed = parseChatRequest(body, 4096, true);
    expect(parsed.body).toBe(body);
    expect(parsed.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'look'],
      ['assistant', ' f{"a":1}'],
      ['tool', '2'],
    ]);
    expect(() => parseChatRequest(body, 4096)).toThrow(ValidationError);
  });

  it.each([
    ['huge max_tokens', { ...ok, max_tokens: 10_000_000 }, 'max_tokens'],
    ['a message without a role', { ...ok, messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['a numeric content', { ...ok, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [
      'a string include_usage',
      { ...ok, stream: true, stream_options: { include_usage: 'yes' } },
      'stream_options.include_usage',
    ],
    ['n of 0', { ...ok, n: 0 }, 'n'],
  ])('still checks what Plaza reads in a request for an upstream model: %s', (_name, body, param) => {
    const error = (() => {
      try {
        parseChatRequest(body, 4096, true);
      } catch (e) {
        return e as ValidationError;
      }
    })();
    expect(error?.param).toBe(param);
  });
});

describe('token approximation', () => {
  it('counts words by started 6 characters, CJK characters and punctuation one each', () => {
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('internationalization')).toBe(4);
    expect(countTokens('软件包')).toBe(3);
    expect(countTokens('')).toBe(0);
  });

  it.each([
    ['Han after a Latin letter', `a${'中'.repeat(3000)}`, 3001],
    ['Han after a digit', `7${'中'.repeat(3000)}`, 3001],
    ['Han before a Latin word', `${'中'.repeat(10)}Plaza`, 11],
    ['kana between Latin words', 'Plazaのアプリdemo', 1 + 4 + 1],
    ['a long vowel mark between katakana', 'データ', 3],
    ['Hangul after Latin letters', 'API사용법', 1 + 3],
    ['Thai, written without spaces', 'สวัสดีครับ', 10],
    ['Bopomofo and Yi', 'ㄅㄆꀀꀁ', 4],
  ])('counts every character of a script written without spaces: %s', (_name, text, expected) => {
    expect(countTokens(text)).toBe(expected);
    const pieces = splitTokens(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBe(expected);
  });

  it('stays linear on 2 MB of text, however its scripts mix', () => {
    const MB = 1 << 20;
    const inputs: Array<[(size: number) => string, (size: number) => number]> = [
      [(n) => 'a中'.repeat(n / 2), (n) => n],
      [(n) => 'x'.repeat(n), (n) => n / 6],
      [(n) => `${'a'.repeat(n / 2)}${'中'.repeat(n / 2)}`, (n) => Math.ceil(n / 12) + n / 2],
      [(n) => ' '.repeat(n), () => 0],
      [(n) => `${' '.repeat(n)}a`, () => 1],
    ];
    /** The fastest of `runs` runs over `text`, in ms, checking the count each time. */
    const fastest = (text: string, tokens: number, runs: number): number => {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < runs; i++) {
        const started = performance.now();
        expect(countTokens(text)).toBe(Math.ceil(tokens));
        expect(splitTokens(text).filter((p) => /\S/.test(p))).toHaveLength(Math.ceil(tokens));
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    for (const [make, tokens] of inputs) {
      // 16 times the text: linear work takes ~16 times as long, quadratic ~256 times. Measured
      // against each other in the same run, the fastest of a few runs each, so a loaded machine
      // slows both alike; a small run under 5 ms counts as 5 (timer and collector noise). The
      // collector makes even linear work on 2 MB up to ~3 times slower per byte under load.
      const small = fastest(make(MB / 8), tokens(MB / 8), 3);
      const large = fastest(make(2 * MB), tokens(2 * MB), 2);
      expect(large / Math.max(small, 5)).toBeLessThan(128);
    }
  });

  it('adds framing per message and reply priming', () => {
    expect(countPromptTokens([{ role: 'user', content: 'hi' }])).toBe(4 + 1 + 3);
  });

  it('splits text into pieces that join back and match the count', () => {
    for (const text of ['Plaza 是一个市场。', 'internationalization rocks, really!', 'a  b']) {
      const pieces = splitTokens(text);
      expect(pieces.join('')).toBe(text);
      expect(pieces.filter((p) => /\S/.test(p)).length).toBe(countTokens(text));
    }
  });
});

describe('retrieval', () => {
  it('finds the package registry for an English question and the Chinese text for a Chinese one', async () => {
    const en = search(await builtinKnowledge().documents('en'), 'How do I register a package source?');
    expect(en[0]?.doc.id).toBe('plaza:package-sources');
    const zh = search(await builtinKnowledge().documents('zh-CN'), '怎么登记软件包来源？');
    expect(zh[0]?.doc.id).toBe('plaza:package-sources');
    expect(zh[0]?.excerpt).toMatch(/软件包/);
  });

  it('searches the end of a very long prompt, where the question is', async () => {
    // Only the last 4,000 characters count: a 900 KB prompt cost 0.4 s of CPU per request before.
    const padding = '随机文字'.repeat(200_000);
    const hits = search(await builtinKnowledge().documents('en'), `${padding} How do I register a package source?`);
    expect(hits[0]?.doc.id).toBe('plaza:package-sources');
  });

  it('finds nothing for a question with no matching terms', async () => {
    expect(search(await builtinKnowledge().documents('en'), 'zzzz qqqq')).toEqual([]);
  });

  it('maps language tags onto supported locales', () => {
    expect(normaliseLocale('zh-TW,zh;q=0.9')).toBe('zh-CN');
    expect(normaliseLocale('fr-FR')).toBe('en');
    expect(normaliseLocale(undefined)).toBe('en');
  });
});

describe('readSseData', () => {
  it('yields each event once its blank line arrives, across arbitrary byte splits', async () => {
    const text = 'data: {"a":1}\r\n\r\n: ping\n\ndata: line1\ndata: line2\n\nevent: x\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 3, 7, bytes.length]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
          controller.close();
        },
      });
      const out: string[] = [];
      for await (const data of readSseData(body)) out.push(data);
      expect(out).toEqual(['{"a":1}', 'line1\nline2', '[DONE]']);
    }
  });
});

describe('createModelRegistry', () => {
  it('offers the embedded assistant alone without an upstream', () => {
    const registry = createModelRegistry({ upstream: false, models: [], aliases: {} });
    expect(registry.list().map((m) => m.id)).toEqual(['plaza-assistant']);
    expect(() => registry.resolve('gpt-4o')).toThrow(ValidationError);
  });

  it('resolves upstream ids and aliases, and lets an alias take over plaza-assistant', () => {
    const registry = createModelRegistry({
      upstream: true,
      models: ['llama3'],
      aliases: { fast: 'llama3', 'plaza-assistant': 'gpt-4o' },
    });
    expect(registry.resolve('fast')).toEqual({ id: 'fast', backend: 'upstream', target: 'llama3' });
    expect(registry.resolve('plaza-assistant').backend).toBe('upstream');
  });
});

describe('requireScope', () => {
  it('forbids a guest what only an account may do', () => {
    const guest = { kind: 'guest' as const, subject: 'gst_1', scopes: ['chat', 'agents:read'], credentialId: 'j' };
    expect(() => requireScope(guest, 'chat')).not.toThrow();
    expect(() => requireScope(guest, 'agents:write')).toThrow(ForbiddenError);
  });
});

describe('websiteContentSource', () => {
  it('turns products, scenarios, plans and the manifesto into documents, falling back to en', async () => {
    const root = mkdtempSync(join(tmpdir(), 'plaza-content-'));
    writeFileSync(
      join(root, 'en.json'),
      JSON.stringify({
        locale: 'en',
        products: [{ id: 'gw', name: 'Gateway', tag: 'MCP', body: 'One endpoint for every connector.', cta: 'Go' }],
        scenarios: [
          {
            id: 'growth',
            name: 'Growth',
            headline: 'Grow.',
            description: 'For marketers.',
            keywords: ['seo'],
            products: ['gw'],
            planId: 'pro',
          },
        ],
        plans: [
          { id: 'pro', name: 'Pro', priceCents: 4900, currency: 'USD', features: ['SSO', 'Receipts for a year'] },
        ],
        manifesto: 'First paragraph.\n\nSecond paragraph.',
        text: { answer: 'template {x}' },
      }),
    );
    const docs = await websiteContentSource(root).documents('zh-CN');
    expect(docs.map((d) => d.id)).toEqual(['product:gw', 'scenario:growth', 'plan:pro', 'manifesto:0', 'manifesto:1']);
    expect(docs.find((d) => d.id === 'plan:pro')?.text).toBe('49.00 USD: SSO; Receipts for a year.');
    // Titles head the answer, in the language of the content read.
    expect(docs.find((d) => d.id === 'manifesto:0')?.title).toBe('Manifesto');
    writeFileSync(join(root, 'zh-CN.json'), JSON.stringify({ locale: 'zh-CN', manifesto: '第一段。' }));
    expect((await websiteContentSource(root).documents('zh-CN')).find((d) => d.id === 'manifesto:0')?.title).toBe(
      '宣言',
    );
    expect(search(docs, 'seo')[0]?.doc.id).toBe('scenario:growth');
    expect(await websiteContentSource(join(root, 'missing')).documents('en')).toEqual([]);
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One piece of Plaza's own content the embedded assistant can retrieve. */
export interface KnowledgeDoc {
  id: string;
  title: string;
  text: string;
  /** Where a visitor can read more (a path or URL), when there is one. */
  link?: string;
  /** Extra search terms that are not shown (e.g. a scenario's keywords). */
  keywords?: string;
}

/** Somewhere the embedded assistant reads documents from, per locale ('en', 'zh-CN', ...). */
export interface KnowledgeSource {
  documents(locale: string): Promise<KnowledgeDoc[]>;
}

/** Locales the assistant answers in. */
export type AssistantLocale = 'en' | 'zh-CN';

/** Maps a BCP 47 tag (or `Accept-Language` value) onto a supported locale. */
export function normaliseLocale(tag: string | undefined): AssistantLocale {
  return tag !== undefined && /^\s*zh\b/i.test(tag) ? 'zh-CN' : 'en';
}

/** Several sources read as one; a failing source is skipped so the others still answer. */
export function combineSources(
  sources: readonly KnowledgeSource[],
  onError?: (error: unknown) => void,
): KnowledgeSource {
  return {
    async documents(locale) {
      const results = await Promise.allSettled(sources.map((source) => source.documents(locale)));
      return results.flatMap((result) => {
        if (result.status === 'fulfilled') return result.value;
        onError?.(result.reason);
        return [];
      });
    },
  };
}

/** Caches a source's answer per locale for `ttlMs`. */
export function cachedSource(source: KnowledgeSource, ttlMs: number, now: () => number): KnowledgeSource {
  const cache = new Map<string, { until: number; docs: Promise<KnowledgeDoc[]> }>();
  return {
    documents(locale) {
      const hit = cache.get(locale);
      if (hit && hit.until > now()) return hit.docs;
      const docs = source.documents(locale);
      cache.set(locale, { until: now() + ttlMs, docs });
      docs.catch(() => cache.delete(locale));
      return docs;
    },
  };
}

/**
 * The website content files `<root>/<locale>.json` (falls back to `en.json`; see
 * config/content): products, scenarios, plans and the manifesto become documents. Read
 * defensively: a missing file or an unexpected shape yields fewer documents, never an error.
 */
export function websiteContentSource(root: string): KnowledgeSource {
  return {
    async documents(locale) {
      for (const candidate of [locale, 'en']) {
        const text = await readFile(join(root, `${candidate}.json`), 'utf8').catch(() => undefined);
        if (text !== undefined) return fromWebsiteContent(JSON.parse(text) as unknown, candidate);
      }
      return [];
    },
  };
}

type Json = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): Json[] =>
  Array.isArray(value) ? value.filter((v): v is Json => v !== null && typeof v === 'object') : [];

function fromWebsiteContent(content: unknown, locale: string): KnowledgeDoc[] {
  if (content === null || typeof content !== 'object') return [];
  const c = content as Json;
  const docs: KnowledgeDoc[] = [];
  for (const p of list(c['products'])) {
    docs.push({
      id: `product:${str(p['id'])}`,
      title: `${str(p['name'])} (${str(p['tag'])})`,
      text: str(p['body']),
      link: '/api/products',
    });
  }
  for (const s of list(c['scenarios'])) {
    const keywords = Array.isArray(s['keywords']) ? s['keywords'].map(str).join(' ') : '';
    docs.push({
      id: `scenario:${str(s['id'])}`,
      title: str(s['name']),
      text: `${str(s['headline'])} ${str(s['description'])}`.trim(),
      keywords,
      link: '/api/scenarios',
    });
  }
  for (const plan of list(c['plans'])) {
    const cents = plan['priceCents'];
    const price = typeof cents === 'number' ? (cents === 0 ? '0' : (cents / 100).toFixed(2)) : '';
    const features = Array.isArray(plan['features']) ? plan['features'].map(str).filter(Boolean).join('; ') : '';
    docs.push({
      id: `plan:${str(plan['id'])}`,
      title: locale === 'en' ? `${str(plan['name'])} plan` : str(plan['name']),
      text: `${price} ${str(plan['currency'])}: ${features}.`,
      keywords: 'plan price pricing cost 方案 价格',
      link: '/api/plans',
    });
  }
  str(c['manifesto'])
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter(Boolean)
    .forEach((paragraph, index) =>
      docs.push({
        id: `manifesto:${index}`,
        title: locale === 'en' ? 'Manifesto' : '宣言',
        text: paragraph,
        link: '/api/manifesto',
      }),
    );
  return docs.filter((doc) => doc.text.trim() !== '' && doc.title.trim() !== '');
}

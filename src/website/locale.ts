import { readCookie } from '../http/index.ts';
import { type Locale, LOCALES } from './schemas.ts';

/** The cookie that remembers the language a visitor switched to on the site. */
export const LOCALE_COOKIE = 'plaza_locale';

/** The locale answers fall back to. */
export const FALLBACK_LOCALE: Locale = 'en';

/** Maps a language tag onto a supported locale: exact match, else by primary language (zh-TW → zh-CN). */
export function matchLocale(tag: string): Locale | undefined {
  const wanted = tag.trim().toLowerCase();
  if (wanted === '' || wanted === '*') return undefined;
  const exact = LOCALES.find((l) => l.toLowerCase() === wanted);
  if (exact) return exact;
  const primary = wanted.split(/[-_]/)[0];
  return LOCALES.find((l) => l.toLowerCase().split('-')[0] === primary);
}

/**
 * Picks the answer locale: a supported `?locale=` wins, then the best supported `Accept-Language`
 * entry by q-value (ties keep header order), then `hint` (e.g. the script of a prompt), then `en`.
 * Unsupported or malformed values are skipped, never an error: a visitor always gets an answer.
 */
export function negotiateLocale(input: {
  query?: unknown;
  acceptLanguage?: string | undefined;
  hint?: Locale | undefined;
}): Locale {
  if (typeof input.query === 'string') {
    const fromQuery = matchLocale(input.query);
    if (fromQuery) return fromQuery;
  }
  const header = input.acceptLanguage;
  if (header) {
    const ranked = header
      .split(',')
      .slice(0, 32)
      .map((entry, index) => {
        const [tag = '', ...params] = entry.split(';');
        const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
        return { tag, q: q === undefined ? 1 : Number(q), index };
      })
      .filter((e) => Number.isFinite(e.q) && e.q > 0)
      .sort((a, b) => b.q - a.q || a.index - b.index);
    for (const entry of ranked) {
      const locale = matchLocale(entry.tag);
      if (locale) return locale;
    }
  }
  return input.hint ?? FALLBACK_LOCALE;
}

/**
 * A visitor's language from their request: the language they chose on the site (its cookie; one
 * that does not decode is no choice), else `Accept-Language`, else English. Pages use it after
 * `?locale=`; system e-mails use it as it is.
 */
export function visitorLocale(headers: { cookie?: string | undefined; acceptLanguage?: string | undefined }): Locale {
  return negotiateLocale({ query: readCookie(headers.cookie, LOCALE_COOKIE), acceptLanguage: headers.acceptLanguage });
}

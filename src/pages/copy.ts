/**
 * The pages' copy per locale (`config/content/pages.<locale>.json`). The zh-CN file is typed as
 * the English one, so a key missing from either fails the type check.
 */
import en from '../../config/content/pages.en.json' with { type: 'json' };
import zhCN from '../../config/content/pages.zh-CN.json' with { type: 'json' };
import type { Locale } from '../website/index.ts';

/** Every string of the pages in one locale. */
export type PageCopy = typeof en;

const zh: PageCopy = zhCN;
const COPY: Record<Locale, PageCopy> = { en, 'zh-CN': zh };

/** The copy of `locale`. */
export function pageCopy(locale: Locale): PageCopy {
  return COPY[locale];
}

/** Fills `{name}` placeholders of a copy string. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

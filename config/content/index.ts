/**
 * The public website's catalog copy, one JSON file per locale. Loaded as JSON modules and
 * validated (shape and cross-locale consistency) by `src/website` at start-up.
 */
import en from './en.json' with { type: 'json' };
import zhCN from './zh-CN.json' with { type: 'json' };

/** Raw content per locale tag; every locale must describe the same products, scenarios and plans. */
export const websiteContentSources: Readonly<Record<string, unknown>> = { en, 'zh-CN': zhCN };

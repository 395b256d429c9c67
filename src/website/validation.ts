import type { z } from 'zod';
import { zhCN } from 'zod/v4/locales';

import { ValidationError } from '../kernel/index.ts';
import { BLANK_PROMPT, type Locale, WELL_FORMED } from './schemas.ts';

/** The words of a refusal around zod's issues, per locale. */
const WORDS: Record<
  Locale,
  { invalid_prompt: string; invalid_lead: string; unknown: string; custom: Record<string, string> }
> = {
  en: {
    invalid_prompt: 'Invalid intent request',
    invalid_lead: 'Invalid lead',
    unknown: 'Unknown field(s)',
    custom: {},
  },
  'zh-CN': {
    invalid_prompt: '意图请求无效',
    invalid_lead: '线索信息无效',
    unknown: '未知字段',
    custom: {
      [BLANK_PROMPT]: 'prompt 不能只有空白',
      [WELL_FORMED]: '必须是格式正确的 Unicode 文本（不能含孤立的代理字符）',
    },
  },
};

/** zod's own messages in each locale but English (its default). */
const ZOD_ERRORS: Partial<Record<Locale, z.core.$ZodErrorMap>> = { 'zh-CN': zhCN().localeError };

/**
 * Parses a request body with a strict schema; on failure throws a ValidationError with the route's
 * §7 code, a readable message and the field-level issues as `details`, worded in `locale` (the
 * answer's language, as the page that sent it asked); field names stay as the API spells them.
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  code: 'invalid_prompt' | 'invalid_lead',
  locale: Locale = 'en',
): z.infer<S> {
  const errors = ZOD_ERRORS[locale];
  const parsed = errors ? schema.safeParse(body, { error: errors }) : schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const words = WORDS[locale];
  const details = parsed.error.issues.slice(0, 10).map((issue) => ({
    path: issue.path.map(String).join('.'),
    message:
      issue.code === 'unrecognized_keys'
        ? `${words.unknown}: ${issue.keys.join(', ')}`
        : (words.custom[issue.message] ?? issue.message),
  }));
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  throw new ValidationError(`${words[code]}: ${summary}`, { code, details, param: details[0]?.path || null });
}

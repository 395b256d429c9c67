/**
 * Pins website locale negotiation: `?locale=` beats Accept-Language, q-values rank header entries,
 * primary languages map onto the supported locales, and anything else falls back to `en`.
 */
import { describe, expect, it } from 'vitest';

import { matchLocale, negotiateLocale } from '../../src/website/index.ts';

describe('negotiateLocale', () => {
  it.each([
    [{ query: 'zh-CN' }, 'zh-CN'],
    [{ query: 'zh' }, 'zh-CN'],
    [{ query: 'ZH-cn' }, 'zh-CN'],
    [{ query: 'en-GB' }, 'en'],
    [{ query: 'zh-CN', acceptLanguage: 'en' }, 'zh-CN'],
    [{ query: 'fr', acceptLanguage: 'zh-CN' }, 'zh-CN'],
    [{ query: ['zh-CN', 'en'], acceptLanguage: 'en' }, 'en'],
    [{ acceptLanguage: 'zh-CN,zh;q=0.9,en;q=0.8' }, 'zh-CN'],
    [{ acceptLanguage: 'fr-FR, de;q=0.9, zh-TW;q=0.5, en;q=0.4' }, 'zh-CN'],
    [{ acceptLanguage: 'en;q=0.2, zh;q=0.8' }, 'zh-CN'],
    [{ acceptLanguage: 'zh;q=0, en' }, 'en'],
    [{ acceptLanguage: 'fr, de' }, 'en'],
    [{ acceptLanguage: '*' }, 'en'],
    [{ acceptLanguage: ';;;,,q=abc' }, 'en'],
    [{ acceptLanguage: '*', hint: 'zh-CN' as const }, 'zh-CN'],
    [{ acceptLanguage: 'en', hint: 'zh-CN' as const }, 'en'],
    [{}, 'en'],
  ])('negotiates %j to %s', (input, expected) => {
    expect(negotiateLocale(input)).toBe(expected);
  });
});

describe('matchLocale', () => {
  it('matches exact tags and primary languages only', () => {
    expect(matchLocale('en-US')).toBe('en');
    expect(matchLocale('zh_Hans')).toBe('zh-CN');
    expect(matchLocale('ja')).toBeUndefined();
    expect(matchLocale('')).toBeUndefined();
  });
});

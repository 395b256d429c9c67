import type { Request, Response } from 'express';

import { readCookie } from '../routes/session-auth.ts';
import { type Locale, matchLocale, negotiateLocale } from '../website/index.ts';

/** The cookie that remembers the language a visitor switched to. */
export const LOCALE_COOKIE = 'plaza_locale';

/**
 * The page locale: `?locale=` (remembered in a cookie so every later page keeps it), then the
 * cookie, then `Accept-Language`, then English.
 */
export function pageLocale(req: Request, res: Response): Locale {
  const asked = typeof req.query['locale'] === 'string' ? matchLocale(req.query['locale']) : undefined;
  if (asked) {
    res.cookie(LOCALE_COOKIE, asked, { path: '/', sameSite: 'lax', maxAge: 365 * 86_400_000, httpOnly: true });
    return asked;
  }
  // A cookie that does not decode is no choice at all (readCookie answers undefined).
  const remembered = readCookie(req.get('cookie'), LOCALE_COOKIE);
  return negotiateLocale({ query: remembered, acceptLanguage: req.get('accept-language') });
}

/**
 * The visitor's language for what the site sends them outside a page (system e-mails): the
 * language they chose on the site (its cookie), else `Accept-Language`, else English.
 */
export function visitorLocale(req: Request): Locale {
  return negotiateLocale({ query: readCookie(req.get('cookie'), LOCALE_COOKIE), acceptLanguage: req.get('accept-language') });
}

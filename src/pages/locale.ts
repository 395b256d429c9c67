import type { Request, Response } from 'express';

import { type Locale, LOCALE_COOKIE, matchLocale, visitorLocale } from '../website/index.ts';

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
  return visitorLocale({ cookie: req.get('cookie'), acceptLanguage: req.get('accept-language') });
}

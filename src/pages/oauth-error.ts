import { visitorLocale } from '../website/index.ts';
import { pageCopy } from './copy.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';

/**
 * The page the authorization server shows when it cannot send the browser back to the client (an
 * unknown client, a redirect URI not registered, a metadata document it could not read), in the
 * site's look and the visitor's language: what the server said, and that the client must start
 * again. The OAuth error code and description are shown as text, never as markup.
 */
export function oauthErrorPage(
  request: { acceptLanguage?: string | undefined; cookie?: string | undefined },
  out: { error?: string | undefined; error_description?: string | undefined },
): string {
  const locale = visitorLocale({ cookie: request.cookie, acceptLanguage: request.acceptLanguage });
  const copy = pageCopy(locale);
  const c = copy.connect;
  const body = html`<h1>${c.failedTitle}</h1>
<p role="alert"><code>${out.error ?? 'server_error'}</code>${out.error_description ? html`: ${out.error_description}` : ''}</p>
<p>${c.failed}</p>`;
  return layout({ locale, copy, section: 'account', title: c.failedTitle, path: '/', body }).value;
}

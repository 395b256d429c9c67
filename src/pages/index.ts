/** The website's HTML pages and their static assets (issue 9). */
export type { ConsentDeps } from './consent-routes.ts';
export { consentRoutes } from './consent-routes.ts';
export { escapeHtml, Html, html } from './html.ts';
export { oauthErrorPage } from './oauth-error.ts';
export type { PageDeps } from './routes.ts';
export { ASSETS_DIR, pageFormRoutes, pageRoutes } from './routes.ts';

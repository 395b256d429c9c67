import { fileURLToPath } from 'node:url';

import express, { type NextFunction, type Request, type Response, Router } from 'express';

import type { NewSession, SignInService } from '../accounts/index.ts';
import { isApiPath, normaliseError, renderError } from '../http/index.ts';
import { AuthError, NotFoundError, ValidationError } from '../kernel/index.ts';
import { type ListingService, PROVIDER_SLUG } from '../marketplace/index.ts';
import type { SourceService } from '../sources/index.ts';
import type { WebsiteRouteDeps } from '../website/index.ts';
import { accountBody } from './account.ts';
import { assistantBody } from './assistant.ts';
import { fill, type PageCopy, pageCopy } from './copy.ts';
import { endpointBody } from './endpoint.ts';
import { homeBody } from './home.ts';
import { handleHomeForm, type HomeFormState } from './home-forms.ts';
import { type Html, html } from './html.ts';
import { layout, type PageSpec, siteUrl } from './layout.ts';
import { pageLocale } from './locale.ts';
import { marketplaceBody } from './marketplace.ts';
import { packagesBody } from './packages.ts';
import { receiptsBody } from './receipts.ts';

/** What the pages are built from. */
export interface PageDeps {
  /** The website API's services: content, intent index, leads and limits (for script-less forms). */
  website: WebsiteRouteDeps;
  listings: ListingService;
  /** Package sources, so a package page for an id nobody registered answers 404. */
  packages?: Pick<SourceService, 'list'>;
  /** Password resets: the page the reset e-mail links to sets the new password. */
  passwordReset?: Pick<SignInService, 'resetPassword'>;
  /**
   * E-mail sign-in links: the page the link opens signs in with one click. `startSession` sets a
   * new session's cookies (the auth routes' own); `siteOrigin` is PUBLIC_BASE_URL's origin.
   */
  emailSignIn?: {
    signIn: Pick<SignInService, 'verifyLink' | 'linkAddress'>;
    startSession: (res: Response, session: NewSession) => void;
    siteOrigin: string;
  };
}

/** Sends one page of the site in the request's locale, built from that locale's copy. */
function page(
  req: Request,
  res: Response,
  build: (copy: PageCopy) => Omit<PageSpec, 'locale' | 'copy' | 'path'>,
  status = 200,
): void {
  const locale = pageLocale(req, res);
  const copy = pageCopy(locale);
  send(res, layout({ locale, copy, path: pathWithoutLocale(req), ...build(copy) }), status);
}

/** A page whose URL holds a one-time token: never stored, and sent as a Referer only as `referrerPolicy` allows. */
function tokenPage(
  req: Request,
  res: Response,
  referrerPolicy: 'no-referrer' | 'same-origin',
  build: (copy: PageCopy) => Omit<PageSpec, 'locale' | 'copy' | 'path'>,
  status: number,
): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', referrerPolicy);
  page(req, res, build, status);
}

/** The page the reset e-mail links to: a form for the new password (no script needed). */
function resetPage(
  req: Request,
  res: Response,
  state: { token: string; error?: string; done?: boolean },
  status = 200,
): void {
  // The token is in the URL: never sent on as a Referer.
  tokenPage(
    req,
    res,
    'no-referrer',
    (copy) => {
      const r = copy.reset;
      const body = state.done
        ? html`<h1>${r.title}</h1><p role="status">${r.done}</p><p><a class="button" href="/account">${r.account}</a></p>`
        : state.token === ''
          ? html`<h1>${r.title}</h1><p>${r.missing}</p><p><a href="/account">${r.account}</a></p>`
          : html`<h1>${r.title}</h1>
<p>${r.lead}</p>
<form method="post" action="/reset-password" novalidate>
  <input type="hidden" name="token" value="${state.token}">
  <div class="field"><label for="reset-password">${r.password}</label><input id="reset-password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="256" aria-describedby="reset-password-hint reset-password-error"${state.error ? html` aria-invalid="true"` : ''}><p id="reset-password-hint" class="hint">${r.hint}</p><p id="reset-password-error" class="field-error"${state.error ? '' : html` hidden`}>${state.error ?? ''}</p></div>
  <button type="submit">${r.submit}</button>
</form>`;
      return { section: 'account', title: r.title, body };
    },
    status,
  );
}

/**
 * The page a sign-in e-mail links to: one button that posts the token. Opening the link uses
 * nothing up, so a mail scanner that fetches it before its reader does not spend it.
 */
function signInPage(
  req: Request,
  res: Response,
  state: { token: string; email?: string | undefined; error?: string },
  status = 200,
): void {
  // The token is in the URL: sent on as a Referer to this site only. (With no-referrer a browser
  // posts the form with `Origin: null`, which the post refuses as another site's.)
  tokenPage(
    req,
    res,
    'same-origin',
    (copy) => {
      const s = copy.signIn;
      const body = state.error
        ? html`<h1>${s.title}</h1><p role="alert">${state.error}</p><p><a class="button" href="/account">${s.account}</a></p>`
        : state.token === ''
          ? html`<h1>${s.title}</h1><p>${s.missing}</p><p><a href="/account">${s.account}</a></p>`
          : state.email === undefined
            ? html`<h1>${s.title}</h1><p role="alert">${s.failed}</p><p><a class="button" href="/account">${s.account}</a></p>`
            : html`<h1>${s.title}</h1>
<p>${fill(s.lead, { email: state.email })}</p>
<p class="muted">${s.notYou}</p>
<form method="post" action="/sign-in">
  <input type="hidden" name="token" value="${state.token}">
  <button type="submit">${s.submit}</button>
</form>`;
      return { section: 'account', title: s.title, body };
    },
    status,
  );
}

/**
 * A 4xx met by a page route, for a browser: a page in the visitor's language that says what was
 * wrong, with the usual status. API clients, and 5xx, go on to the JSON error handler.
 */
function pageErrors() {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    // Static assets keep the JSON errors of every other file-like route.
    if (res.headersSent || !wantsHtml(req) || req.path.startsWith('/assets/')) return next(error);
    const rendered = renderError(normaliseError(error), 'website', req.requestId);
    if (rendered.status >= 500) return next(error);
    for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    const message = String(rendered.body['message'] ?? '');
    page(
      req,
      res,
      (copy) => ({
        title: copy.site.badRequest,
        body: html`<h1>${copy.site.badRequest}</h1><p>${fill(copy.site.badRequestBody, { message })}</p><p><a href="/">${copy.site.notFoundHome}</a></p>`,
      }),
      rendered.status,
    );
  };
}

/**
 * Whether a form post came from another site: its Origin is neither the site's public origin
 * (PUBLIC_BASE_URL) nor the host the request was sent to (Express's `req.host`, which follows
 * X-Forwarded-Host behind a trusted proxy). A post without Origin passes.
 */
function crossSite(req: Request, siteOrigin: string): boolean {
  const origin = req.get('origin');
  if (origin === undefined) return false;
  if (origin === siteOrigin) return false;
  try {
    const host = new URL(origin).host;
    return host === '' || (host !== req.get('host') && host !== req.host);
  } catch {
    return true;
  }
}

/** Where the pages' stylesheet and scripts live (served under /assets). */
export const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

const ENDPOINT_PAGE_LIMIT = 200;

/** The request's path and query without `locale`, always a path on this site (siteUrl). */
function pathWithoutLocale(req: Request): string {
  const url = siteUrl(req.originalUrl);
  url.searchParams.delete('locale');
  return `${url.pathname}${url.search}`;
}

function send(res: Response, page: Html, status = 200): void {
  // Pages depend on the locale cookie and Accept-Language; revalidate every time (a page that
  // holds a secret, like a link's token, has said no-store already).
  res.status(status).type('html');
  if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-cache');
  res.vary('Accept-Language').vary('Cookie');
  res.send(page.value);
}

/**
 * Whether the client asked for HTML (browsers navigating do). Other clients get the API's JSON
 * errors instead of an HTML error page, like every other route.
 */
function wantsHtml(req: Request): boolean {
  return (req.get('accept') ?? '').includes('text/html');
}

function text(value: unknown, max: number): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

function homePage(deps: PageDeps, req: Request, res: Response, state: HomeFormState = {}, status = 200): void {
  const locale = pageLocale(req, res);
  const copy = pageCopy(locale);
  const h = copy.home;
  const data = {
    text: {
      intentEmpty: h.intentEmpty,
      recommended: h.recommended,
      plan: h.plan,
      leadReceived: h.leadReceived,
      emailInvalid: h.emailInvalid,
      scenarioMissing: h.scenarioMissing,
      tooMany: h.tooMany,
      failed: h.failed,
      sending: h.sending,
    },
  };
  const body = homeBody(deps.website.content.catalog(locale), copy, state);
  send(
    res,
    layout({
      locale,
      copy,
      path: pathWithoutLocale(req),
      section: 'home',
      title: h.title,
      body,
      script: 'home.js',
      data,
    }),
    status,
  );
}

/**
 * The Home forms posted without script (`POST /`, form-encoded). Mounted before the app's JSON
 * body reader, which refuses every other content type.
 */
export function pageFormRoutes(deps: PageDeps): Router {
  const router = Router();
  // Anything but a browser's form post goes on to the JSON body reader and its 4xx answers.
  router.post('/', (req, _res, next) =>
    next(req.is('application/x-www-form-urlencoded') && wantsHtml(req) ? undefined : 'router'),
  );
  // PostgreSQL text cannot hold U+0000: a form field carrying one is refused (it answered 500).
  const verify = (_req: unknown, _res: unknown, buf: Buffer) => {
    if (buf.includes('%00') || buf.includes(0))
      throw new ValidationError('Form fields must not contain NUL characters (%00).');
  };
  router.post(
    '/',
    express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, verify }),
    async (req, res) => {
      const locale = pageLocale(req, res);
      const { state, status } = await handleHomeForm(req, deps.website, locale, pageCopy(locale));
      res.setHeader('Cache-Control', 'no-store');
      homePage(deps, req, res, state, status);
    },
  );
  const reset = deps.passwordReset;
  if (reset) {
    // A browser's form post only; API clients use POST /api/auth/password/reset (JSON answers).
    router.post('/reset-password', (req, _res, next) =>
      next(req.is('application/x-www-form-urlencoded') && wantsHtml(req) ? undefined : 'router'),
    );
    router.post(
      '/reset-password',
      express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 5, verify }),
      async (req, res) => {
        const form = req.body as Record<string, unknown>;
        const token = typeof form['token'] === 'string' ? form['token'].slice(0, 200) : '';
        try {
          await reset.resetPassword(token, form['password']);
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          // Said in the page's language: the password's length, or a link that no longer works.
          const r = pageCopy(pageLocale(req, res)).reset;
          resetPage(req, res, { token, error: error.param === 'password' ? r.passwordInvalid : r.linkInvalid }, 400);
          return;
        }
        resetPage(req, res, { token, done: true });
      },
    );
  }
  const emailSignIn = deps.emailSignIn;
  if (emailSignIn) {
    // A browser's form post only; API clients use POST /api/auth/email/verify (JSON answers).
    router.post('/sign-in', (req, _res, next) =>
      next(req.is('application/x-www-form-urlencoded') && wantsHtml(req) ? undefined : 'router'),
    );
    router.post(
      '/sign-in',
      express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 5, verify }),
      async (req, res) => {
        const form = req.body as Record<string, unknown>;
        const token = typeof form['token'] === 'string' ? form['token'].slice(0, 200) : '';
        const copy = pageCopy(pageLocale(req, res)).signIn;
        // Another site must not sign a visitor into an account of its choosing (login CSRF).
        if (crossSite(req, emailSignIn.siteOrigin)) {
          signInPage(req, res, { token, error: copy.crossSite }, 403);
          return;
        }
        let signedIn: Awaited<ReturnType<typeof emailSignIn.signIn.verifyLink>>;
        try {
          signedIn = await emailSignIn.signIn.verifyLink(token);
        } catch (error) {
          // A used or expired link (400), or an account that is not active (401): said on the page.
          if (error instanceof ValidationError) signInPage(req, res, { token, error: copy.failed }, 400);
          else if (error instanceof AuthError) signInPage(req, res, { token, error: error.message }, 401);
          else throw error;
          return;
        }
        emailSignIn.startSession(res, signedIn.session);
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(303, signedIn.next);
      },
    );
  }
  router.use(pageErrors());
  return router;
}

/**
 * The website's HTML pages (issue 9): Home, Marketplace (and one endpoint), Packages, Assistant,
 * Receipts and Account in `en` and `zh-CN`, and their static assets under `/assets`. Pages are
 * rendered on the server from the same services the JSON API uses; scripts only enhance them
 * and talk to the public API routes.
 */
export function pageRoutes(deps: PageDeps): Router {
  const router = Router();
  const assets = express.static(ASSETS_DIR, { index: false, maxAge: '10m', fallthrough: false });
  // Other methods go on to the JSON 404: serve-static would answer them 405 with an empty body.
  router.use('/assets', (req, res, next) =>
    req.method === 'GET' || req.method === 'HEAD' ? assets(req, res, next) : next(),
  );

  router.get('/', (req, res) => {
    // A plan button (`/?plan=<id>#lead-title`): the lead form says which plan was chosen and
    // starts on the scenario that plan serves.
    const planId = text(req.query['plan'], 40);
    const catalog = deps.website.content.catalog(pageLocale(req, res));
    const plan = catalog.plans.find((p) => p.id === planId);
    const scenario = plan && catalog.scenarios.find((s) => s.planId === plan.id);
    if (!plan) return homePage(deps, req, res);
    homePage(deps, req, res, {
      lead: {
        values: scenario ? { scenario: scenario.id } : {},
        errors: {},
        note: fill(pageCopy(pageLocale(req, res)).home.planChosen, { plan: plan.name }),
      },
    });
  });

  router.get('/marketplace', async (req, res) => {
    const q = text(req.query['q'], 200).trim();
    const providerParam = text(req.query['provider'], 63);
    const provider = PROVIDER_SLUG.test(providerParam) ? providerParam : '';
    const cursor = text(req.query['cursor'], 512) || undefined;
    const [tools, endpoints] = await Promise.all([
      deps.listings.searchTools({ q: q || undefined, provider: provider || undefined, limit: 50, cursor }),
      deps.listings.listEndpoints({}, ENDPOINT_PAGE_LIMIT),
    ]);
    page(req, res, (copy) => {
      const m = copy.market;
      const data = {
        text: {
          listing: m.listing,
          listed: m.listed,
          probeWaiting: m.probeWaiting,
          probeHealthy: m.probeHealthy,
          probeFailed: m.probeFailed,
          probeNoTools: m.probeNoTools,
          probeAuthRequired: m.probeAuthRequired,
          viewEndpoint: m.viewEndpoint,
          conflict: m.conflict,
          invalid: m.invalid,
          failed: copy.home.failed,
          tooMany: copy.home.tooMany,
        },
      };
      return {
        section: 'marketplace',
        title: m.title,
        body: marketplaceBody({ q, provider, tools, endpoints: endpoints.items, later: cursor !== undefined }, copy),
        script: 'marketplace.js',
        data,
      };
    });
  });

  router.get('/marketplace/endpoints/:id', async (req, res) => {
    let found;
    try {
      found = await deps.listings.getEndpoint(String(req.params['id']), 30);
    } catch (error) {
      if (!(error instanceof NotFoundError) || !wantsHtml(req)) throw error;
      page(
        req,
        res,
        (copy) => ({
          section: 'marketplace',
          title: copy.endpoint.notFound,
          body: html`<h1>${copy.endpoint.notFound}</h1><p><a href="/marketplace">${copy.endpoint.back}</a></p>`,
        }),
        404,
      );
      return;
    }
    const { endpoint, probes } = found;
    const tools = await deps.listings.searchTools({ provider: endpoint.provider, limit: 100 });
    page(req, res, (copy) => ({
      section: 'marketplace',
      title: endpoint.provider,
      body: endpointBody(endpoint, probes, tools.items, copy),
    }));
  });

  router.get('/assistant', (req, res) => {
    page(req, res, (copy) => ({
      section: 'assistant',
      title: copy.assistant.title,
      body: assistantBody(copy),
      script: 'assistant.js',
      data: { text: copy.assistant },
    }));
  });

  router.get('/receipts', (req, res) => {
    page(req, res, (copy) => ({
      section: 'receipts',
      title: copy.receipts.title,
      body: receiptsBody(copy),
      script: 'receipts.js',
      data: { text: copy.receipts },
    }));
  });

  router.get('/packages', (req, res) => {
    page(req, res, (copy) => ({
      section: 'packages',
      title: copy.packages.title,
      body: packagesBody(copy, undefined),
      script: 'packages.js',
      data: { text: copy.packages },
    }));
  });

  router.get('/packages/:id', async (req, res) => {
    const id = String(req.params['id']).slice(0, 128);
    const known =
      !id.includes('\u0000') &&
      (!deps.packages || (await deps.packages.list({ packageId: id }, 1, undefined)).items.length > 0);
    if (!known) {
      if (!wantsHtml(req)) throw new NotFoundError('No such package.');
      page(
        req,
        res,
        (copy) => ({
          section: 'packages',
          title: copy.packages.notFound,
          body: html`<h1>${copy.packages.notFound}</h1><p><a href="/packages">${copy.packages.title}</a></p>`,
        }),
        404,
      );
      return;
    }
    page(req, res, (copy) => ({
      section: 'packages',
      title: id,
      body: packagesBody(copy, id),
      script: 'packages.js',
      data: { text: copy.packages },
    }));
  });

  router.get('/sign-in', async (req, res) => {
    // The page names the address the link signs in as: a link someone else sent cannot sign a
    // visitor into the sender's account unnoticed (login CSRF needs only one click).
    const token = text(req.query['token'], 200);
    const email = token && deps.emailSignIn ? await deps.emailSignIn.signIn.linkAddress(token) : undefined;
    signInPage(req, res, { token, email });
  });

  router.get('/reset-password', (req, res) => {
    resetPage(req, res, { token: text(req.query['token'], 200) });
  });

  router.get('/account', (req, res) => {
    // The free plan's button (`/account?plan=<id>`) lands here: the page names the plan chosen.
    const planId = text(req.query['plan'], 40);
    const plan = planId
      ? deps.website.content.catalog(pageLocale(req, res)).plans.find((p) => p.id === planId)
      : undefined;
    page(req, res, (copy) => ({
      section: 'account',
      title: copy.account.title,
      body: accountBody(copy, plan?.name),
      script: 'account.js',
      data: { text: copy.account },
    }));
  });

  // A browser asking for a page that does not exist gets a page that says so; API clients (and
  // every API path) keep the JSON 404.
  router.use((req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !wantsHtml(req) || isApiPath(req.path)) return next();
    page(
      req,
      res,
      (copy) => ({
        title: copy.site.notFound,
        body: html`<h1>${copy.site.notFound}</h1><p>${copy.site.notFoundBody}</p><p><a href="/">${copy.site.notFoundHome}</a></p>`,
      }),
      404,
    );
  });
  router.use(pageErrors());

  return router;
}

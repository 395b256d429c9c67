import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { SessionPrincipal, SessionService } from '../accounts/index.ts';
import type { AgentService } from '../agents/index.ts';
import { readCookie } from '../http/index.ts';
import { AuthError, ForbiddenError, ValidationError } from '../kernel/index.ts';
import type { ConsentView } from './consent.ts';
import { pageCopy } from './copy.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import { pageLocale } from './locale.ts';

/** What the consent routes are built from. */
export interface ConsentDeps {
  provider: () => Promise<Provider>;
  agents: AgentService;
  sessions: SessionService;
  /** The session cookie's name (`__Host-plaza_session` over https). */
  sessionCookie: string;
  /** PUBLIC_BASE_URL's origin: a post from any other origin is refused. */
  siteOrigin: string;
  /** The resource a request that names none is granted (`…/mcp`). */
  defaultResource: string;
}

const UID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The page's own Content-Security-Policy: the site's, with framing refused outright (clickjacking)
 * and form posts allowed to this site and to the client's redirect origin only, which the answer
 * is redirected to (browsers apply form-action to the redirects that follow a post).
 */
function consentCsp(redirectOrigin: string | undefined): string {
  const formAction = redirectOrigin ? `'self' ${redirectOrigin}` : `'self'`;
  return `default-src 'self'; base-uri 'self'; font-src 'self' https: data:; form-action ${formAction}; frame-ancestors 'none'; img-src 'self' https: data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' https:`;
}

/** The origin of a redirect URI (http or https), for the page's form-action. */
export function originOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
}

/** The consent page's parts the routes are built from (consent-routes.ts). */
export type ConsentPage = ReturnType<typeof createConsentPage>;

/**
 * The consent page's parts: who is signed in, the interaction this browser holds, what the page
 * shows, and how it is sent (its own headers, or the site's JSON error to a client that did not
 * ask for HTML).
 */
export function createConsentPage(deps: ConsentDeps) {
  async function signedIn(req: Request): Promise<SessionPrincipal | undefined> {
    const token = readCookie(req.get('cookie'), deps.sessionCookie);
    if (!token) return undefined;
    try {
      return await deps.sessions.authenticate(token);
    } catch (error) {
      if (error instanceof AuthError) return undefined;
      throw error;
    }
  }

  /**
   * Sends the page. A refusal (4xx) goes to a client that did not ask for HTML as the site's JSON
   * error instead, as every other page route answers one: `message` is what it says.
   */
  function send(
    req: Request,
    res: Response,
    body: ReturnType<typeof html>,
    title: string,
    status: number,
    redirectOrigin?: string,
    message = title,
  ): void {
    if (status >= 400 && !(req.get('accept') ?? '').includes('text/html'))
      throw status === 403 ? new ForbiddenError(message) : new ValidationError(message);
    const locale = pageLocale(req, res);
    const copy = pageCopy(locale);
    res.status(status).type('html');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', consentCsp(redirectOrigin));
    res.setHeader('X-Frame-Options', 'DENY');
    // Not no-referrer: with it a browser posts the form with `Origin: null`, which the post refuses.
    res.setHeader('Referrer-Policy', 'same-origin');
    res.send(layout({ locale, copy, section: 'account', title, path: req.path, body }).value);
  }

  function expired(req: Request, res: Response): void {
    const c = pageCopy(pageLocale(req, res)).connect;
    send(req, res, html`<h1>${c.expiredTitle}</h1><p>${c.expired}</p>`, c.expiredTitle, 400, undefined, c.expired);
  }

  /** The interaction this browser holds for `uid` (its cookie), or undefined when there is none. */
  async function interaction(req: Request, res: Response) {
    const uid = String(req.params['uid']);
    if (!UID.test(uid)) return undefined;
    const provider = await deps.provider();
    try {
      const details = await provider.interactionDetails(req, res);
      return details.uid === uid ? { provider, details } : undefined;
    } catch (error) {
      // No interaction cookie, or an expired interaction; anything else (the database) is a 5xx.
      if (error instanceof errors.SessionNotFound) return undefined;
      throw error;
    }
  }

  async function view(
    provider: Provider,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    session: SessionPrincipal,
    extra: Pick<ConsentView, 'error' | 'values'>,
  ): Promise<ConsentView> {
    const params = details.params as Record<string, unknown>;
    const client = await provider.Client.find(String(params['client_id']));
    const logo = client?.['logoUri'];
    return {
      uid: details.uid,
      csrfToken: session.csrfToken,
      client: {
        id: String(params['client_id']),
        name: typeof client?.['clientName'] === 'string' ? client['clientName'] : undefined,
        logoUri: typeof logo === 'string' && logo.startsWith('https://') ? logo : undefined,
        documentHost: (client as { clientIdMetadataDocument?: boolean } | undefined)?.clientIdMetadataDocument
          ? new URL(String(params['client_id'])).host
          : undefined,
      },
      redirectHost: URL.canParse(String(params['redirect_uri'])) ? new URL(String(params['redirect_uri'])).host : '',
      resource: requestedResources(params).join(' '),
      scopes: typeof params['scope'] === 'string' ? params['scope'].split(' ').filter(Boolean) : [],
      agents: await deps.agents.list(session.accountId),
      ...extra,
    };
  }

  /** The resources the request names (RFC 8707 allows several), or the default one. */
  function requestedResources(params: Record<string, unknown>): string[] {
    const named = params['resource'];
    const list = (Array.isArray(named) ? named : [named]).filter((r): r is string => typeof r === 'string' && r !== '');
    return list.length > 0 ? list : [deps.defaultResource];
  }

  /** The refusal of a post from another site, or without the session's CSRF token. */
  function crossSite(req: Request, res: Response): void {
    const c = pageCopy(pageLocale(req, res)).connect;
    send(
      req,
      res,
      html`<h1>${c.expiredTitle}</h1><p role="alert">${c.crossSite}</p>`,
      c.expiredTitle,
      403,
      undefined,
      c.crossSite,
    );
  }

  return { signedIn, send, expired, crossSite, interaction, view, requestedResources };
}

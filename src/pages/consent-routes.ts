import express, { type Request, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { SessionPrincipal, SessionService } from '../accounts/index.ts';
import type { AgentService } from '../agents/index.ts';
import { readCookie } from '../http/index.ts';
import { AuthError, digestsEqual, ForbiddenError, hashSecret, ValidationError } from '../kernel/index.ts';
import { consentBody, type ConsentView } from './consent.ts';
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

function originOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
}

/**
 * `GET/POST /connect/<uid>`: the consent step of Plaza's OAuth authorization (issue 34). The
 * signed-in account holder (sent to the Account page to sign in first, and back) sees the
 * client, the endpoint and scopes, picks one of the account's agents or creates one, and allows
 * or declines. Allowing grants the `mcp` scope on the requested resource to the client, as that
 * agent. Posts are checked for their origin and for the session's CSRF token; the page cannot be
 * framed; the only redirects are oidc-provider's own (back to the client's registered redirect URI).
 */
export function consentRoutes(deps: ConsentDeps): Router {
  const router = Router();

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

  router.get('/connect/:uid', async (req, res) => {
    const found = await interaction(req, res);
    if (!found) return expired(req, res);
    const session = await signedIn(req);
    if (!session) {
      // Sign in first; the Account page comes back here (its `next` is a path on this site).
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, `/account?next=${encodeURIComponent(`/connect/${found.details.uid}`)}`);
      return;
    }
    const shown = await view(found.provider, found.details, session, {});
    const c = pageCopy(pageLocale(req, res)).connect;
    send(
      req,
      res,
      consentBody(pageCopy(pageLocale(req, res)), shown),
      c.title.replace('{client}', shown.client.name ?? shown.client.id),
      200,
      originOf(found.details.params['redirect_uri']),
    );
  });

  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });
  router.post('/connect/:uid', form, async (req, res) => {
    const c = pageCopy(pageLocale(req, res)).connect;
    const origin = req.get('origin');
    if (origin !== undefined && origin !== deps.siteOrigin) {
      send(
        req,
        res,
        html`<h1>${c.expiredTitle}</h1><p role="alert">${c.crossSite}</p>`,
        c.expiredTitle,
        403,
        undefined,
        c.crossSite,
      );
      return;
    }
    const found = await interaction(req, res);
    if (!found) return expired(req, res);
    const session = await signedIn(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const field = (name: string) => (typeof body[name] === 'string' ? body[name].slice(0, 512) : '');
    const csrf = field('csrf_token');
    if (!session || !csrf || !digestsEqual(hashSecret(csrf), hashSecret(session.csrfToken))) {
      send(
        req,
        res,
        html`<h1>${c.expiredTitle}</h1><p role="alert">${c.crossSite}</p>`,
        c.expiredTitle,
        403,
        undefined,
        c.crossSite,
      );
      return;
    }
    const { provider, details } = found;
    if (field('decision') !== 'approve') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The account holder declined the authorization.' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const values = {
      agent: field('agent'),
      display_name: field('display_name'),
      owner_context: field('owner_context'),
    };
    const again = async (error: string) => {
      const shown = await view(provider, details, session, { error, values });
      send(
        req,
        res,
        consentBody(pageCopy(pageLocale(req, res)), shown),
        c.title.replace('{client}', shown.client.name ?? shown.client.id),
        400,
        originOf(details.params['redirect_uri']),
        error,
      );
    };
    let agentId: string;
    if (values.agent === 'new') {
      if (values.display_name.trim() === '') return again(c.nameMissing);
      try {
        const created = await deps.agents.create(session.accountId, {
          display_name: values.display_name,
          ...(values.owner_context.trim() ? { owner_context: values.owner_context } : {}),
        });
        agentId = created.agent.id;
      } catch (error) {
        if (error instanceof ValidationError) return again(error.message);
        throw error;
      }
    } else {
      const mine = (await deps.agents.list(session.accountId)).find(
        (a) => a.id === values.agent && a.status === 'active',
      );
      if (!mine) return again(c.agentUnknown);
      agentId = mine.id;
    }
    const params = details.params as Record<string, unknown>;
    const clientId = String(params['client_id']);
    const requested = new Set(typeof params['scope'] === 'string' ? params['scope'].split(' ') : []);
    const grant = new provider.Grant({ accountId: agentId, clientId });
    // `mcp` is granted on the resource, and as a provider scope too (see the provider's `scopes`).
    const oidcScopes = ['openid', 'offline_access', 'mcp'].filter((s) => requested.has(s));
    if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
    for (const resource of requestedResources(params)) grant.addResourceScope(resource, 'mcp');
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: agentId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });
  return router;
}

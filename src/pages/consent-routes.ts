import express, { Router } from 'express';
import type Provider from 'oidc-provider';

import { digestsEqual, hashSecret, ValidationError } from '../kernel/index.ts';
import { consentBody } from './consent.ts';
import { type ConsentDeps, createConsentPage, originOf } from './consent-page.ts';
import { pageCopy } from './copy.ts';
import { pageLocale } from './locale.ts';

export type { ConsentDeps } from './consent-page.ts';

/**
 * Grants the client `mcp` on each requested resource, as the agent, and the OpenID scopes it asked
 * for among `openid`, `offline_access` and `mcp`; returns the grant's id. The client's grant that
 * this browser's authorization carries (`earlierGrantId`) is extended when it is the same client's
 * as the same agent, so that authorizing a client again does not add a connection each time.
 */
async function grantMcp(
  provider: Provider,
  params: Record<string, unknown>,
  agentId: string,
  requestedResources: (params: Record<string, unknown>) => string[],
  earlierGrantId: string | undefined,
): Promise<string> {
  const clientId = String(params['client_id']);
  const requested = new Set(typeof params['scope'] === 'string' ? params['scope'].split(' ') : []);
  const earlier = earlierGrantId ? await provider.Grant.find(earlierGrantId) : undefined;
  const grant =
    earlier?.accountId === agentId && earlier.clientId === clientId
      ? earlier
      : new provider.Grant({ accountId: agentId, clientId });
  // `mcp` is granted on the resource, and as a provider scope too (see the provider's `scopes`).
  const oidcScopes = ['openid', 'offline_access', 'mcp'].filter((s) => requested.has(s));
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  for (const resource of requestedResources(params)) grant.addResourceScope(resource, 'mcp');
  return grant.save();
}

/**
 * Forgets the agent an earlier authorization in this browser signed in as, when this one picks
 * another. oidc-provider keeps the last sign-in's account (here an agent) in its own browser
 * session for an hour and, finishing an authorization as another account, answers with a logout
 * form instead of the code; that logout would also end the earlier grants of clients without
 * `offline_access`. Plaza's sign-in is its own session, and each authorization picks its agent
 * afresh, so the provider's session is left holding no agent and no client's authorization.
 */
async function forgetEarlierAgent(
  provider: Provider,
  details: Awaited<ReturnType<Provider['interactionDetails']>>,
  agentId: string,
): Promise<void> {
  const earlier = details.session;
  if (!earlier?.accountId || earlier.accountId === agentId) return;
  const stored = earlier.uid ? await provider.Session.findByUid(earlier.uid) : undefined;
  if (stored) {
    stored.accountId = undefined;
    stored.authorizations = undefined;
    await stored.persist();
  }
  // The interaction remembers whom its session held, and is refused if that changed.
  details.session = undefined;
  await details.persist();
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

  const { signedIn, send, expired, crossSite, interaction, view, requestedResources } = createConsentPage(deps);

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
    if (origin !== undefined && origin !== deps.siteOrigin) return crossSite(req, res);
    const found = await interaction(req, res);
    if (!found) return expired(req, res);
    const session = await signedIn(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const field = (name: string) => (typeof body[name] === 'string' ? body[name].slice(0, 512) : '');
    const csrf = field('csrf_token');
    if (!session || !csrf || !digestsEqual(hashSecret(csrf), hashSecret(session.csrfToken))) return crossSite(req, res);
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
    const grantId = await grantMcp(
      provider,
      details.params as Record<string, unknown>,
      agentId,
      requestedResources,
      details.grantId,
    );
    await forgetEarlierAgent(provider, details, agentId);
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: agentId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });
  return router;
}

import { AGENT_NAME_MAX, type AgentView } from '../agents/index.ts';
import { fill, type PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/** What the consent page shows about one authorization request. */
export interface ConsentView {
  /** The interaction id: the form posts to `/connect/<uid>`. */
  uid: string;
  /** The signed-in session's CSRF token, posted back with the form. */
  csrfToken: string;
  client: {
    id: string;
    name: string | undefined;
    /** An https logo URL, shown only when the client's document gave one. */
    logoUri: string | undefined;
    /** The host of its metadata document URL (CIMD), or undefined for a registered (RFC 7591) client. */
    documentHost: string | undefined;
  };
  /** The host (and port) the answer goes back to. */
  redirectHost: string;
  resource: string;
  scopes: string[];
  agents: AgentView[];
  /** What the last post got wrong, and the values to show again. */
  error?: string | undefined;
  values?: { agent?: string; display_name?: string; owner_context?: string } | undefined;
}

/**
 * The consent page of an OAuth authorization (issue 34): which client asks, where the answer goes,
 * for which gateway endpoint and scopes; the account holder picks one of the account's active
 * agents or names a new one, then allows or declines. A plain form: no script needed.
 */
export function consentBody(copy: PageCopy, view: ConsentView): Html {
  const c = copy.connect;
  const active = view.agents.filter((a) => a.status === 'active');
  const chosen = view.values?.agent ?? active[0]?.id ?? 'new';
  const clientName = view.client.name ?? view.client.id;
  return html`
<h1>${fill(c.title, { client: clientName })}</h1>
<section class="card" aria-labelledby="connect-client">
  <h2 id="connect-client">${c.clientTitle}</h2>
  ${view.client.logoUri ? html`<p><img src="${view.client.logoUri}" alt="" width="48" height="48" referrerpolicy="no-referrer"></p>` : ''}
  <dl>
    <dt>${c.clientName}</dt><dd>${clientName}</dd>
    <dt>${c.clientId}</dt><dd><code>${view.client.id}</code></dd>
    <dt>${c.registration}</dt><dd>${view.client.documentHost ? fill(c.byDocument, { host: view.client.documentHost }) : c.byRegistration}</dd>
    <dt>${c.redirect}</dt><dd><code>${view.redirectHost}</code></dd>
    <dt>${c.resource}</dt><dd><code>${view.resource}</code></dd>
    <dt>${c.scopes}</dt><dd>${view.scopes.length > 0 ? view.scopes.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`) : c.noScopes}</dd>
  </dl>
  <p class="muted">${c.explain}</p>
</section>
${view.error ? html`<p class="notice" role="alert" id="connect-error">${view.error}</p>` : ''}
<form method="post" action="/connect/${view.uid}" class="card" aria-labelledby="connect-agent">
  <input type="hidden" name="csrf_token" value="${view.csrfToken}">
  <fieldset>
    <legend id="connect-agent">${c.agentTitle}</legend>
    ${active.map(
      (a) =>
        html`<div class="field check"><input type="radio" id="agent-${a.id}" name="agent" value="${a.id}"${chosen === a.id ? html` checked` : ''}><label for="agent-${a.id}">${a.display_name} <span class="muted">(${a.agin_id})</span></label></div>`,
    )}
    <div class="field check"><input type="radio" id="agent-new" name="agent" value="new"${chosen === 'new' ? html` checked` : ''}><label for="agent-new">${c.newAgent}</label></div>
    <div class="field"><label for="new-name">${c.agentName}</label><input id="new-name" name="display_name" maxlength="${AGENT_NAME_MAX}" value="${view.values?.display_name ?? ''}" aria-describedby="new-name-hint"><p id="new-name-hint" class="hint">${c.agentNameHint}</p></div>
    <div class="field"><label for="new-context">${c.ownerContext}</label><input id="new-context" name="owner_context" maxlength="200" value="${view.values?.owner_context ?? ''}" aria-describedby="new-context-hint"><p id="new-context-hint" class="hint">${c.ownerContextHint}</p></div>
  </fieldset>
  <p>
    <button type="submit" name="decision" value="approve">${c.approve}</button>
    <button type="submit" name="decision" value="deny" class="secondary">${c.deny}</button>
  </p>
</form>
`;
}

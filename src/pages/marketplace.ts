import { type Endpoint, LISTING_TEXT_MAX, type Page, type Tool } from '../marketplace/index.ts';
import { aginLimitsNote } from './agin-limits.ts';
import { fill, type PageCopy } from './copy.ts';
import { excerpt, type Html, html } from './html.ts';

/** What the marketplace page shows. */
export interface MarketplaceView {
  q: string;
  provider: string;
  tools: Page<Tool>;
  endpoints: Endpoint[];
  /** A page after the first (the request had a cursor). */
  later?: boolean;
}

/** A health badge: text and colour, never colour alone. */
export function healthBadge(health: string, copy: PageCopy): Html {
  const labels: Record<string, string> = {
    healthy: copy.market.healthy,
    degraded: copy.market.degraded,
    auth_required: copy.market.authRequired,
  };
  const label = labels[health] ?? health;
  return html`<span class="badge badge-${health}">${label}</span>`;
}

/**
 * The MCP revisions an endpoint offers, newest first, as one line ("MCP 2026-07-28, 2025-11-25"),
 * or a note that no probe has got an answer yet.
 */
export function revisionsText(endpoint: Endpoint, copy: PageCopy): Html {
  if (endpoint.protocolVersions.length === 0) return html`<span class="muted">${copy.market.revisionsUnknown}</span>`;
  return html`MCP ${endpoint.protocolVersions.join(', ')}`;
}

function credentialNote(endpoint: Endpoint | undefined, copy: PageCopy): Html {
  const credentials = endpoint?.requiredCredentials ?? [];
  if (credentials.length === 0) return html`<p class="muted small">${copy.market.noCredentials}</p>`;
  return html`<p class="small"><strong>${copy.market.credentials}:</strong> ${credentials.map(
    (c, i) => html`${i > 0 ? ', ' : ''}<code>${c.name}</code>${c.description ? html` (${c.description})` : ''}`,
  )}</p>`;
}

function toolList(view: MarketplaceView, copy: PageCopy): Html {
  const m = copy.market;
  const byId = new Map(view.endpoints.map((e) => [e.id, e]));
  const more = new URLSearchParams({
    ...(view.q ? { q: view.q } : {}),
    ...(view.provider ? { provider: view.provider } : {}),
  });
  const first = new URLSearchParams(more);
  if (view.tools.nextCursor) more.set('cursor', view.tools.nextCursor);
  return html`<div id="tool-results" aria-live="polite">
  ${view.later ? html`<p><a href="/marketplace${first.size > 0 ? `?${first.toString()}` : ''}">${m.firstPage}</a></p>` : ''}
  <p class="muted" id="tool-count">${fill(view.later ? m.toolsMore : view.tools.items.length === 1 && !view.tools.nextCursor ? m.toolFound : m.toolsFound, { count: view.tools.items.length + (view.tools.nextCursor ? '+' : '') })}</p>
  ${view.tools.items.length === 0 ? html`<p>${m.noTools}</p>` : ''}
  <ul class="tools">
    ${view.tools.items.map((t) => {
      const endpoint = byId.get(t.endpointId);
      return html`<li class="card tool" data-tool="${t.name}" data-provider="${t.provider}">
        <div class="tool-head"><h3><code>${t.name}</code></h3>${healthBadge(t.health, copy)}</div>
        <p class="small">${m.provider}: <a href="/marketplace/endpoints/${t.endpointId}">${t.provider}</a></p>
        <p>${excerpt(t.description, 300)}</p>
        ${t.requiresAgin ? html`<p class="small note">${m.requiresAgin}${t.callerIdentity ? html` — ${t.callerIdentity}` : ''}</p>` : ''}
        ${credentialNote(endpoint, copy)}
        ${aginLimitsNote(endpoint, copy)}
      </li>`;
    })}
  </ul>
  ${view.tools.nextCursor ? html`<p><a href="/marketplace?${more.toString()}">${m.pages}</a></p>` : ''}
</div>`;
}

function endpointTable(endpoints: Endpoint[], copy: PageCopy): Html {
  const m = copy.market;
  // An empty catalog says so (a table of headings alone said nothing); the same id, so the
  // page script's refresh after a listing swaps in the table.
  if (endpoints.length === 0) return html`<div id="endpoint-table"><p>${m.noEndpoints}</p></div>`;
  // data-label: on a phone the table stacks into one card per endpoint (site.css, table.stack).
  return html`<div class="table-wrap" id="endpoint-table"><table class="stack">
  <caption class="sr-only">${m.endpoints}</caption>
  <thead><tr><th scope="col">${m.provider}</th><th scope="col">${m.url}</th><th scope="col">${m.registrant}</th><th scope="col">${m.status}</th><th scope="col">${m.tools}</th><th scope="col">${m.revisions}</th></tr></thead>
  <tbody>
  ${endpoints.map(
    (e) => html`<tr>
      <td data-label="${m.provider}"><a href="/marketplace/endpoints/${e.id}">${e.provider}</a></td>
      <td class="break" data-label="${m.url}"><code>${e.url}</code></td>
      <td class="break" data-label="${m.registrant}">${e.registeredBy}</td>
      <td data-label="${m.status}">${healthBadge(e.status, copy)}</td>
      <td data-label="${m.tools}">${e.toolCount}</td>
      <td class="revisions" data-label="${m.revisions}">${revisionsText(e, copy)}</td>
    </tr>`,
  )}
  </tbody>
</table></div>`;
}

function listingForm(copy: PageCopy): Html {
  const m = copy.market;
  return html`<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">${m.listTitle}</h2>
  <p>${m.listIntro}</p>
  <noscript><p class="notice">${copy.site.noscript}</p></noscript>
  <form id="listing-form" novalidate>
    <div class="field">
      <label for="f-provider">${m.fProvider}</label>
      <input id="f-provider" name="provider" required pattern="[a-z0-9][a-z0-9\\-]{1,62}" aria-describedby="f-provider-hint f-provider-error" autocomplete="off">
      <p id="f-provider-hint" class="hint">${m.fProviderHint}</p>
      <p id="f-provider-error" class="field-error" hidden></p>
    </div>
    <div class="field">
      <label for="f-url">${m.fUrl}</label>
      <input id="f-url" name="url" type="url" required aria-describedby="f-url-error" autocomplete="off">
      <p id="f-url-error" class="field-error" hidden></p>
    </div>
    <div class="field">
      <label for="f-registered_by">${m.fRegisteredBy}</label>
      <input id="f-registered_by" name="registered_by" type="email" required autocomplete="email" aria-describedby="f-registered_by-error">
      <p id="f-registered_by-error" class="field-error" hidden></p>
    </div>
    <div class="field wide">
      <label for="f-summary">${m.fSummary}</label>
      <textarea id="f-summary" name="summary" rows="3" required maxlength="4000" aria-describedby="f-summary-hint f-summary-error"></textarea>
      <p id="f-summary-hint" class="hint">${m.fSummaryHint}</p>
      <p id="f-summary-error" class="field-error" hidden></p>
    </div>
    ${(['audience', 'purpose', 'risk'] as const).map(
      (name) => html`<div class="field">
      <label for="f-${name}">${{ audience: m.fAudience, purpose: m.fPurpose, risk: m.fRisk }[name]}</label>
      <input id="f-${name}" name="${name}" maxlength="${LISTING_TEXT_MAX[name]}" aria-describedby="f-${name}-error">
      <p id="f-${name}-error" class="field-error" hidden></p>
    </div>`,
    )}
    <div class="field">
      <label for="f-required_credentials">${m.fCredentials}</label>
      <input id="f-required_credentials" name="required_credentials" aria-describedby="f-required_credentials-error">
      <p id="f-required_credentials-error" class="field-error" hidden></p>
    </div>
    <div class="field wide check"><input id="f-agin_support" name="agin_support" type="checkbox"><label for="f-agin_support">${m.fAgin}</label></div>
    ${(['per_minute', 'per_day'] as const).map(
      (name) => html`<div class="field">
      <label for="f-agin_${name}">${name === 'per_minute' ? m.fAginPerMinute : m.fAginPerDay}</label>
      <input id="f-agin_${name}" name="agin_${name}" inputmode="numeric" pattern="[1-9][0-9]{0,8}" autocomplete="off" aria-describedby="f-agin-limits-hint f-agin_${name}-error">
      <p id="f-agin_${name}-error" class="field-error" hidden></p>
    </div>`,
    )}
    <p id="f-agin-limits-hint" class="hint field wide">${m.fAginLimitsHint}</p>
    <button type="submit">${m.listSubmit}</button>
  </form>
  <div id="listing-result" class="result" role="status" aria-live="polite"></div>
</section>`;
}

/** The marketplace: tool search (a GET form, so it works without script), endpoints, listing form. */
export function marketplaceBody(view: MarketplaceView, copy: PageCopy): Html {
  const m = copy.market;
  const providers = [...new Set(view.endpoints.map((e) => e.provider))].sort();
  return html`
<h1>${m.title}</h1>
<p class="lead">${m.lead}</p>
<section aria-labelledby="search-title">
  <h2 id="search-title">${m.search}</h2>
  <form id="tool-search" class="search" action="/marketplace" method="get" role="search">
    <div class="field">
      <label for="q">${m.searchLabel}</label>
      <input id="q" name="q" type="search" maxlength="200" value="${view.q}">
    </div>
    <div class="field">
      <label for="provider">${m.provider}</label>
      <select id="provider" name="provider">
        <option value="">${m.anyProvider}</option>
        ${providers.map((p) => html`<option value="${p}"${p === view.provider ? html` selected` : ''}>${p}</option>`)}
      </select>
    </div>
    <button type="submit">${m.searchSubmit}</button>
  </form>
  ${toolList(view, copy)}
</section>
<section aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">${m.endpoints}</h2>
  ${endpointTable(view.endpoints, copy)}
</section>
${listingForm(copy)}
`;
}

import type { LocaleCatalog } from '../website/index.ts';
import type { PageCopy } from './copy.ts';
import type { HomeFormState } from './home-forms.ts';
import { type Html, html } from './html.ts';
import { PRODUCT_LINKS } from './product-links.ts';

function price(cents: number, currency: string, locale: string, copy: PageCopy): string {
  if (cents === 0) return copy.home.free;
  return `${new Intl.NumberFormat(locale, { style: 'currency', currency }).format(cents / 100)} ${copy.home.perMonth}`;
}

/** The button label of a plan action id (`start_free`, `checkout`, `contact_sales`). */
function actionLabel(action: string, copy: PageCopy): string {
  const labels: Record<string, string> = copy.home.actions;
  return labels[action] ?? action;
}

/** A product card's call to action: a link where the product has a page, else its words alone. */
function ctaLink(productId: string, label: string): Html | string {
  const href = PRODUCT_LINKS[productId];
  return href === undefined ? label : html`<a href="${href}">${label}</a>`;
}

/**
 * Home: the catalog (products, scenarios, plans, manifesto) rendered on the server from the
 * website content, the intent box and the lead form. With script, home.js sends them to
 * `POST /api/agent/intent` and `POST /api/leads`; without, they post to `/` (see home-forms.ts)
 * and `state` carries the outcome.
 */
export function homeBody(catalog: LocaleCatalog, copy: PageCopy, state: HomeFormState = {}): Html {
  const h = copy.home;
  const intent = state.intent;
  const lead = state.lead ?? { values: {}, errors: {} };
  const value = (name: string) => lead.values[name] ?? '';
  const invalid = (name: string) => (lead.errors[name] ? html` aria-invalid="true"` : '');
  const error = (name: string) =>
    html`<p id="lead-${name}-error" class="field-error"${lead.errors[name] ? '' : html` hidden`}>${lead.errors[name] ?? ''}</p>`;
  const answer = intent?.answer;
  return html`
<section class="hero" aria-labelledby="hero-title">
  <h1 id="hero-title">${h.title}</h1>
  <p class="lead">${h.lead}</p>
</section>

<section class="card intent" aria-labelledby="intent-title">
  <h2 id="intent-title">${h.intentTitle}</h2>
  <form id="intent-form" method="post" action="/#intent-title" novalidate>
    <input type="hidden" name="form" value="intent">
    <label for="intent-prompt">${h.intentLabel}</label>
    <textarea id="intent-prompt" name="prompt" rows="3" maxlength="2000" required placeholder="${h.intentPlaceholder}" aria-describedby="intent-prompt-error"${intent?.error ? html` aria-invalid="true"` : ''}>${intent?.prompt ?? ''}</textarea>
    <p id="intent-prompt-error" class="field-error"${intent?.error ? '' : html` hidden`}>${intent?.error ?? ''}</p>
    <button type="submit">${h.intentSubmit}</button>
  </form>
  <div id="intent-result" class="result" aria-live="polite">${
    answer
      ? html`<h3>${answer.scenario.name}</h3><p class="muted">${answer.scenario.headline}</p><p id="intent-answer">${answer.answer}</p><p><strong>${h.recommended}: </strong>${answer.recommendedProducts.join(' · ')}</p><p><strong>${h.plan}: </strong>${answer.planName}</p>`
      : ''
  }</div>
</section>

<section aria-labelledby="products-title">
  <h2 id="products-title">${h.products}</h2>
  <ul class="grid">
    ${catalog.products.map(
      (p) =>
        html`<li class="card"><p class="tag">${p.tag}</p><h3>${p.name}</h3><p>${p.body}</p><p class="cta">${ctaLink(p.id, p.cta)}</p></li>`,
    )}
  </ul>
</section>

<section aria-labelledby="scenarios-title">
  <h2 id="scenarios-title">${h.scenarios}</h2>
  <ul class="grid">
    ${catalog.scenarios.map(
      (s) =>
        html`<li class="card" id="scenario-${s.id}"><h3>${s.name}</h3><p>${s.headline}</p><p class="muted">${s.products.join(' · ')}</p></li>`,
    )}
  </ul>
</section>

<section aria-labelledby="plans-title">
  <h2 id="plans-title">${h.plans}</h2>
  <ul class="grid plans">
    ${catalog.plans.map(
      (p) => html`<li class="card plan" id="plan-${p.id}">
        <h3>${p.name}</h3>
        <p class="price">${price(p.priceCents, p.currency, catalog.locale, copy)}</p>
        <ul class="features">${p.features.map((f) => html`<li>${f}</li>`)}</ul>
        <a class="button" href="${p.checkoutUrl}" data-action="${p.action}">${actionLabel(p.action, copy)}</a>
      </li>`,
    )}
  </ul>
</section>

<section class="card" aria-labelledby="lead-title">
  <h2 id="lead-title">${h.leadTitle}</h2>
  <p>${h.leadIntro}</p>
  ${lead.note ? html`<p class="notice" id="lead-plan">${lead.note}</p>` : ''}
  <form id="lead-form" method="post" action="/#lead-title" novalidate>
    <input type="hidden" name="form" value="lead">
    <div class="field">
      <label for="lead-email">${h.email}</label>
      <input id="lead-email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="lead-email-error" value="${value('email')}"${invalid('email')}>
      ${error('email')}
    </div>
    <div class="field">
      <label for="lead-scenario">${h.scenario}</label>
      <select id="lead-scenario" name="scenario" required aria-describedby="lead-scenario-error"${invalid('scenario')}>
        <option value="">${h.chooseScenario}</option>
        ${catalog.scenarios.map((s) => html`<option value="${s.id}"${value('scenario') === s.id || (!value('scenario') && answer?.scenario.id === s.id) ? html` selected` : ''}>${s.name}</option>`)}
      </select>
      ${error('scenario')}
    </div>
    <div class="field">
      <label for="lead-company">${h.company}</label>
      <input id="lead-company" name="company" autocomplete="organization" maxlength="200" aria-describedby="lead-company-error" value="${value('company')}"${invalid('company')}>
      ${error('company')}
    </div>
    <div class="field">
      <label for="lead-teamSize">${h.teamSize}</label>
      <input id="lead-teamSize" name="teamSize" maxlength="50" aria-describedby="lead-teamSize-error" value="${value('teamSize')}"${invalid('teamSize')}>
      ${error('teamSize')}
    </div>
    <div class="field wide">
      <label for="lead-painPoint">${h.painPoint}</label>
      <textarea id="lead-painPoint" name="painPoint" rows="3" maxlength="2000" aria-describedby="lead-painPoint-error"${invalid('painPoint')}>${value('painPoint')}</textarea>
      ${error('painPoint')}
    </div>
    <button type="submit">${h.leadSubmit}</button>
  </form>
  <div id="lead-result" class="result${lead.kind === 'warn' ? ' warn' : ''}" role="status" aria-live="polite">${lead.message ? html`<p><strong>${lead.message}</strong></p>` : ''}</div>
</section>

<section aria-labelledby="manifesto-title" class="manifesto">
  <h2 id="manifesto-title">${h.manifesto}</h2>
  ${catalog.manifesto.split(/\n\s*\n/).map((para) => html`<p>${para.trim()}</p>`)}
</section>
`;
}

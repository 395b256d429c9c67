import type { PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/**
 * Account: sign-in by e-mail link when signed out; API keys and agents (AGIN cards) when signed
 * in. account.js reads `GET /api/auth/session` and shows the matching part.
 */
export function accountBody(copy: PageCopy): Html {
  const a = copy.account;
  return html`
<h1>${a.title}</h1>
<p class="lead">${a.lead}</p>
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<div id="account-message" role="status" aria-live="polite"></div>
<section id="signin" class="card" aria-labelledby="signin-title" hidden>
  <h2 id="signin-title">${a.send}</h2>
  <form id="signin-form" novalidate>
    <div class="field"><label for="a-email">${a.email}</label><input id="a-email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="a-email-error"><p id="a-email-error" class="field-error" hidden></p></div>
    <button type="submit">${a.send}</button>
  </form>
</section>
<div id="signed-in" hidden>
  <p><span id="who"></span> <button type="button" id="signout" class="link">${a.signOut}</button></p>
  <section class="card" aria-labelledby="keys-title">
    <h2 id="keys-title">${a.keys}</h2>
    <ul id="key-list"></ul>
    <form id="key-form"><button type="submit">${a.newKey}</button></form>
    <div id="key-secret" role="status" aria-live="polite"></div>
  </section>
  <section class="card" aria-labelledby="agents-title">
    <h2 id="agents-title">${a.agents}</h2>
    <ul id="agent-list"></ul>
    <form id="agent-form">
      <div class="field"><label for="g-name">${a.agentName}</label><input id="g-name" name="display_name" required maxlength="200"></div>
      <button type="submit">${a.newAgent}</button>
    </form>
  </section>
</div>
`;
}

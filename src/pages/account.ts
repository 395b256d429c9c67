import { AGENT_NAME_MAX } from '../agents/index.ts';
import { fill, type PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/**
 * Account: sign-in by e-mail link or password when signed out; the password, API keys, agents
 * (AGIN cards, each with its policy and limits) and the account's agent policy when signed in. account.js reads `GET /api/auth/session` and shows the matching part.
 */
export function accountBody(copy: PageCopy, planName?: string): Html {
  const a = copy.account;
  return html`
<h1>${a.title}</h1>
<p class="lead">${a.lead}</p>
${planName ? html`<p class="notice" id="account-plan">${fill(a.startFree, { plan: planName })}</p>` : ''}
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<div id="account-message" role="status" aria-live="polite"></div>
<section id="signin" class="card" aria-labelledby="signin-title" hidden>
  <h2 id="signin-title">${a.send}</h2>
  <form id="signin-form" novalidate>
    <div class="field"><label for="a-email">${a.email}</label><input id="a-email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="a-email-error"><p id="a-email-error" class="field-error" hidden></p></div>
    <button type="submit">${a.send}</button>
  </form>
  <h3 id="password-title">${a.passwordTitle}</h3>
  <form id="password-form" aria-labelledby="password-title" novalidate>
    <div class="field"><label for="p-email">${a.email}</label><input id="p-email" name="email" type="email" autocomplete="username" required maxlength="254" aria-describedby="p-email-error"><p id="p-email-error" class="field-error" hidden></p></div>
    <div class="field"><label for="p-password">${a.password}</label><input id="p-password" name="password" type="password" autocomplete="current-password" required maxlength="256" aria-describedby="p-password-error"><p id="p-password-error" class="field-error" hidden></p></div>
    <button type="submit">${a.signIn}</button>
    <button type="button" id="forgot" class="link">${a.forgot}</button>
  </form>
</section>
<div id="signed-in" hidden>
  <p><span id="who"></span> <button type="button" id="signout" class="link">${a.signOut}</button></p>
  <section class="card" aria-labelledby="set-password-title">
    <h2 id="set-password-title">${a.setPassword}</h2>
    <form id="set-password-form" novalidate>
      <div class="field" id="current-password-field" hidden><label for="s-current">${a.currentPassword}</label><input id="s-current" name="current_password" type="password" autocomplete="current-password" maxlength="256" aria-describedby="s-current-error"><p id="s-current-error" class="field-error" hidden></p></div>
      <div class="field"><label for="s-password">${a.newPassword}</label><input id="s-password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="256" aria-describedby="s-password-hint s-password-error"><p id="s-password-hint" class="hint">${a.passwordHint}</p><p id="s-password-error" class="field-error" hidden></p></div>
      <button type="submit">${a.savePassword}</button>
    </form>
  </section>
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
      <div class="field"><label for="g-name">${a.agentName}</label><input id="g-name" name="display_name" required maxlength="${AGENT_NAME_MAX}" aria-describedby="g-name-error"><p id="g-name-error" class="field-error" hidden></p></div>
      <button type="submit">${a.newAgent}</button>
    </form>
    <div id="agent-token" role="status" aria-live="polite"></div>
  </section>
  <section class="card" aria-labelledby="agent-policy-title">
    <h2 id="agent-policy-title">${a.policy.accountTitle}</h2>
    <p>${a.policy.accountLead}</p>
    <div id="account-policy"></div>
    <p id="account-policy-status" class="policy-status" role="status"></p>
  </section>
</div>
`;
}

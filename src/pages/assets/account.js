/* global document, location, confirm */
// Account: sign-in by e-mail link; when signed in, API keys and agents with their AGIN cards, both
// through the session cookie and its CSRF header. A new API key is kept for the tab, for the
// receipts page.
import { attachAgentPolicies, loadAccountPolicy } from './account-policy.js';
import {
  el,
  fieldError,
  fill,
  invalidMessage,
  maybeSignedIn,
  pageData,
  requestJson,
  retryAfter,
  say,
  session as store,
} from './common.js';

const { text, locale } = pageData();
const message = document.getElementById('account-message');
const signin = document.getElementById('signin');
const signedIn = document.getElementById('signed-in');
let csrf = '';

/**
 * What to say of an API refusal. An English page shows the API's own message (it says the most);
 * another shows the page's words, in its language: `own` for a 400 (the page knows what it sent),
 * that the session ended for a 401, else that it did not work.
 */
function refusal(res, own) {
  if (locale === 'en' && res.body?.message) return res.body.message;
  if (res.status === 400 && own) return own;
  if (res.status === 401) return text.signedOut;
  return text.failed;
}

/**
 * Where to go once signed in: the `next` path this page was opened with (the consent page of an
 * MCP client's sign-in sends the visitor here), only ever a path on this site.
 */
const nextPath = (() => {
  const next = new URLSearchParams(location.search).get('next') || '';
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '';
})();

async function start() {
  // Signed out, the session route would answer 401 (an error in the console on every visit):
  // asking which sign-in methods exist says as much about whether accounts are on.
  const res = maybeSignedIn()
    ? await requestJson('GET', '/api/auth/session').catch(() => null)
    : await requestJson('GET', '/api/auth/options').catch(() => null);
  if (res?.ok && res.body?.account) {
    if (nextPath) return location.assign(nextPath);
    csrf = res.body.session?.csrf_token || '';
    document.getElementById('who').textContent = fill(text.signedInAs, { email: res.body.account.email });
    // Changing a password asks for the current one; setting the first one does not.
    document.getElementById('current-password-field').hidden = !res.body.account.has_password;
    signin.hidden = true;
    signedIn.hidden = false;
    await Promise.all([loadKeys(), loadAgents(), loadPolicyDefaults()]);
    return;
  }
  if (!res || res.status === 404) {
    say(message, text.unavailable, 'warn');
    return;
  }
  signin.hidden = false;
}

// Each action starts by clearing what the last one said, so no old status stays on screen.
document.getElementById('signed-in').addEventListener('submit', () => say(message, ''), true);
document.getElementById('signin').addEventListener('submit', () => say(message, ''), true);

document.getElementById('signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const email = document.getElementById('a-email');
  if (!email.value.trim() || !email.validity.valid) {
    fieldError(email, invalidMessage(email));
    return email.focus();
  }
  fieldError(email, '');
  const res = await requestJson('POST', '/api/auth/email/register-link', {
    email: email.value.trim(),
    next: nextPath || '/account',
  });
  if (res.status === 429) return say(message, `${text.failed} (${retryAfter(res)} s)`, 'warn');
  if (res.status === 404) return say(message, text.unavailable, 'warn');
  if (!res.ok) return fieldError(email, refusal(res, text.refusedEmail));
  say(message, text.sent);
});

const passwordEmail = document.getElementById('p-email');
const password = document.getElementById('p-password');

/** The e-mail of the password form, or undefined (with its error shown) when it is not one. */
function passwordFormEmail() {
  if (!passwordEmail.value.trim() || !passwordEmail.validity.valid) {
    fieldError(passwordEmail, invalidMessage(passwordEmail));
    passwordEmail.focus();
    return undefined;
  }
  fieldError(passwordEmail, '');
  return passwordEmail.value.trim();
}

document.getElementById('password-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const email = passwordFormEmail();
  if (!email) return;
  if (!password.value) return password.focus();
  fieldError(password, '');
  const res = await requestJson('POST', '/api/auth/password/login', { email, password: password.value });
  if (res.status === 429) return say(message, `${text.failed} (${retryAfter(res)} s)`, 'warn');
  if (res.status === 401) return fieldError(password, text.wrongPassword);
  if (!res.ok)
    return fieldError(
      password,
      refusal(res, /password/.test(res.body?.message || '') ? text.passwordHint : text.refusedEmail),
    );
  password.value = '';
  say(message, '');
  await start();
});

document.getElementById('forgot').addEventListener('click', async () => {
  say(message, '');
  const email = passwordFormEmail();
  if (!email) return;
  const res = await requestJson('POST', '/api/auth/password/reset/request', { email });
  if (res.status === 429) return say(message, `${text.failed} (${retryAfter(res)} s)`, 'warn');
  if (!res.ok) return fieldError(passwordEmail, refusal(res, text.refusedEmail));
  say(message, text.resetSent);
});

document.getElementById('set-password-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const next = document.getElementById('s-password');
  const current = document.getElementById('s-current');
  if (next.value.length < 8 || next.value.length > 256) {
    fieldError(next, text.passwordHint);
    return next.focus();
  }
  fieldError(next, '');
  fieldError(current, '');
  const body = { password: next.value, ...(current.value ? { current_password: current.value } : {}) };
  const res = await requestJson('POST', '/api/account/password', body, { 'x-csrf-token': csrf });
  if (res.status === 400 && /current_password/.test(res.body?.message || ''))
    return fieldError(current, text.wrongPassword);
  if (!res.ok) return fieldError(next, refusal(res, text.passwordHint));
  next.value = '';
  current.value = '';
  document.getElementById('current-password-field').hidden = false;
  say(message, text.passwordSaved);
});

document.getElementById('signout').addEventListener('click', async () => {
  say(message, '');
  await requestJson('POST', '/api/auth/logout', undefined, { 'x-csrf-token': csrf });
  store.set('plaza_api_key', '');
  say(agentToken, '');
  signedIn.hidden = true;
  signin.hidden = false;
});

async function loadKeys() {
  const res = await requestJson('GET', '/api/account/keys');
  const list = document.getElementById('key-list');
  if (!res.ok) return list.replaceChildren(el('li', {}, text.failed));
  list.replaceChildren(
    ...res.body.keys.map((k) =>
      el(
        'li',
        {},
        el('code', {}, `${k.prefix}…`),
        ` ${k.name || ''} — ${k.created_at.slice(0, 10)}${k.revoked_at ? ` (${text.revoked})` : ''}`,
      ),
    ),
  );
}

document.getElementById('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const res = await requestJson('POST', '/api/account/keys', { name: 'web' }, { 'x-csrf-token': csrf });
  const box = document.getElementById('key-secret');
  if (!res.ok) return say(box, refusal(res, text.tooManyKeys), 'error');
  store.set('plaza_api_key', res.body.api_key);
  box.className = 'result';
  box.replaceChildren(el('p', {}, text.keyShown), el('p', {}, el('code', { id: 'new-key' }, res.body.api_key)));
  await loadKeys();
});

// Agents are managed with the session cookie and its CSRF header, as the API keys are: a new tab
// or a new sign-in needs no API key.
const agentList = document.getElementById('agent-list');
const agentToken = document.getElementById('agent-token');

async function loadAgents() {
  const res = await requestJson('GET', '/api/agents');
  if (!res.ok) return agentList.replaceChildren(el('li', {}, text.failed));
  const agents = res.body.data.agents.filter((a) => !a.public);
  agentList.replaceChildren(
    ...agents.map((a) =>
      el(
        'li',
        { 'data-agin-id': a.agin_id, 'data-agent-id': a.id },
        el('strong', {}, a.display_name),
        ' — AGIN ',
        el('code', {}, a.agin_id),
        ` · ${a.agent_principal} · ${a.owner_context} · ${a.status} `,
        a.status === 'active'
          ? el(
              'button',
              {
                type: 'button',
                class: 'link new-token',
                'aria-label': fill(text.newAgentTokenFor, { name: a.display_name }),
              },
              text.newAgentToken,
            )
          : '',
        a.status === 'active'
          ? el('ul', {
              class: 'connected-clients',
              'aria-label': fill(text.connectedClientsOf, { name: a.display_name }),
            })
          : '',
      ),
    ),
  );
  await Promise.all(agents.filter((a) => a.status === 'active').map((a) => loadClients(a)));
  attachAgentPolicies(agentList, agents, policyContext);
}

// Who may call what (issue 35): each agent's policy and limits, and the account's default and ceiling.
const policyContext = { t: text.policy, csrf: () => csrf, refusal };

function loadPolicyDefaults() {
  return loadAccountPolicy(
    document.getElementById('account-policy'),
    document.getElementById('account-policy-status'),
    policyContext,
  );
}

/**
 * The MCP clients signed in as an agent (OAuth grants), each with Disconnect. Absent when Plaza
 * offers no OAuth (the route answers 404): then nothing is shown.
 */
async function loadClients(agent) {
  const item = [...agentList.querySelectorAll('li[data-agent-id]')].find((li) => li.dataset.agentId === agent.id);
  const list = item?.querySelector('ul.connected-clients');
  if (!list) return;
  const res = await requestJson('GET', `/api/agents/${encodeURIComponent(agent.id)}/clients`);
  if (!res.ok) return list.remove();
  list.replaceChildren(
    ...res.body.data.clients.map((c) => {
      const name = c.client_name || clientHost(c.client_id);
      return el(
        'li',
        { 'data-grant-id': c.grant_id },
        fill(text.connectedClient, { client: name, since: c.connected_at.slice(0, 10) }),
        ' ',
        el(
          'button',
          {
            type: 'button',
            class: 'link disconnect',
            'data-client': name,
            'aria-label': fill(text.disconnectFor, { client: name, name: agent.display_name }),
          },
          text.disconnect,
        ),
      );
    }),
  );
  if (list.children.length === 0) list.remove();
}

/** The host of a client id that is a metadata document URL, else the id itself. */
function clientHost(clientId) {
  try {
    return new URL(clientId).host || clientId;
  } catch {
    return clientId;
  }
}

/** Shows an agent's gateway token, which the server returns only in this answer. */
function showAgentToken(agent, token) {
  agentToken.className = 'result';
  agentToken.replaceChildren(
    el('p', {}, el('strong', {}, fill(text.agentTokenShown, { name: agent.display_name }))),
    el('p', {}, el('code', { id: 'new-agent-token' }, token)),
    el('p', {}, text.agentTokenUse),
    el(
      'pre',
      { tabindex: 0 },
      el('code', { id: 'agent-login-command' }, `plaza agents login --token ${token} --url ${location.origin}`),
    ),
    el('p', {}, text.agentTokenLost),
  );
  agentToken.scrollIntoView({ block: 'nearest' });
}

document.getElementById('agent-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = document.getElementById('g-name');
  if (!name.value.trim()) return name.focus();
  fieldError(name, '');
  say(agentToken, '');
  const res = await requestJson('POST', '/api/agents', { display_name: name.value.trim() }, { 'x-csrf-token': csrf });
  // A refused name is said at the field, where the visitor is (the page's status line is far above).
  if (res.status === 400) {
    fieldError(name, refusal(res, fill(text.refusedName, { max: name.maxLength })));
    return name.focus();
  }
  if (!res.ok) return say(message, refusal(res), 'error');
  name.value = '';
  showAgentToken(res.body.data.agent, res.body.data.token);
  await loadAgents();
});

agentList.addEventListener('click', async (event) => {
  const button = event.target.closest('button.disconnect');
  if (!button) return;
  const agentId = button.closest('li[data-agent-id]').dataset.agentId;
  const grantId = button.closest('li[data-grant-id]').dataset.grantId;
  say(message, '');
  const res = await requestJson(
    'POST',
    `/api/agents/${encodeURIComponent(agentId)}/clients/${encodeURIComponent(grantId)}/disconnect`,
    {},
    { 'x-csrf-token': csrf },
  );
  if (!res.ok) return say(message, refusal(res), 'error');
  say(message, fill(text.disconnected, { client: button.dataset.client }));
  await loadAgents();
});

agentList.addEventListener('click', async (event) => {
  const button = event.target.closest('button.new-token');
  if (!button) return;
  const item = button.closest('li');
  const name = item.querySelector('strong').textContent;
  // The current token stops working at once: an agent using it would be cut off.
  if (!confirm(fill(text.confirmNewToken, { name }))) return;
  say(message, '');
  say(agentToken, '');
  const res = await requestJson(
    'POST',
    `/api/agents/${encodeURIComponent(item.dataset.agentId)}/token`,
    {},
    { 'x-csrf-token': csrf },
  );
  if (!res.ok) return say(message, refusal(res), 'error');
  showAgentToken(res.body.data.agent, res.body.data.token);
  await loadAgents();
});

start();

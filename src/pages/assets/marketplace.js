/* global document, DOMParser, history, location */
// Marketplace: live tool search (re-renders the server's result list) and the listing form with
// the probe result polled from the endpoint detail route as it arrives.
import { checkFields, el, fieldError, fieldProblems, fill, pageData, requestJson, retryAfter, say } from './common.js';

const { text } = pageData();

// --- live search: fetch the same page with the new query and swap in its result list ---
const searchForm = document.getElementById('tool-search');
let timer = null;
let generation = 0;

async function refreshResults(push) {
  const params = new URLSearchParams(new FormData(searchForm));
  for (const [key, value] of [...params]) if (!value) params.delete(key);
  const url = `/marketplace${params.size ? `?${params}` : ''}`;
  const mine = ++generation;
  const res = await fetch(url, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
  if (!res.ok || mine !== generation) return;
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
  for (const id of ['tool-results', 'endpoint-table']) {
    const fresh = doc.getElementById(id);
    const current = document.getElementById(id);
    if (fresh && current) current.replaceWith(document.adoptNode(fresh));
  }
  const freshProviders = doc.getElementById('provider');
  const providers = document.getElementById('provider');
  if (freshProviders && providers && freshProviders.options.length !== providers.options.length) {
    const chosen = providers.value;
    providers.replaceChildren(...[...freshProviders.options].map((o) => document.adoptNode(o)));
    providers.value = chosen;
  }
  if (push) history.replaceState(null, '', url);
}

searchForm.addEventListener('submit', (event) => {
  event.preventDefault();
  refreshResults(true).catch(() => searchForm.submit());
});
searchForm.addEventListener('input', () => {
  clearTimeout(timer);
  timer = setTimeout(() => refreshResults(true).catch(() => undefined), 250);
});

// --- listing form ---
const form = document.getElementById('listing-form');
const result = document.getElementById('listing-result');
const FIELDS = ['provider', 'url', 'registered_by', 'summary'];

function clientCheck() {
  return checkFields(form, FIELDS);
}

function body() {
  const out = {};
  for (const name of [...FIELDS, 'audience', 'purpose', 'risk']) {
    const value = form.elements[name].value.trim();
    if (value) out[name] = value;
  }
  const credentials = form.elements.required_credentials.value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (credentials.length) out.required_credentials = credentials;
  out.agin_support = form.elements.agin_support.checked;
  // Per-AGIN limits Plaza enforces for every agent calling this provider (issue 35); sent when given.
  const limits = {};
  for (const name of ['per_minute', 'per_day']) {
    const value = form.elements[`agin_${name}`].value.trim();
    if (value) limits[name] = /^\d+$/.test(value) ? Number(value) : value;
  }
  if (Object.keys(limits).length) out.agin_limits = limits;
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function showProbe(endpoint) {
  const last = endpoint.last_probe;
  const link = el('a', { href: `/marketplace/endpoints/${encodeURIComponent(endpoint.id)}` }, text.viewEndpoint);
  let line;
  let kind = '';
  if (endpoint.status === 'healthy' || endpoint.status === 'degraded')
    line = fill(text.probeHealthy, { count: endpoint.tool_count });
  else if (endpoint.status === 'auth_required') line = fill(text.probeAuthRequired, { provider: endpoint.provider });
  else if (last && !last.ok) {
    line = fill(text.probeFailed, { error: last.error || '' });
    kind = 'error';
  } else if (last && last.ok) line = text.probeNoTools;
  else line = text.probeWaiting;
  result.className = `result ${kind}`.trim();
  result.replaceChildren(el('p', { id: 'probe-status', 'data-status': endpoint.status }, line), el('p', {}, link));
  return Boolean(last);
}

async function follow(id) {
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const res = await requestJson('GET', `/api/mcp/endpoints/${encodeURIComponent(id)}?probes=1`);
    if (res.ok && showProbe(res.body)) {
      await refreshResults(false).catch(() => undefined);
      return;
    }
    await sleep(attempt < 10 ? 500 : 2000);
  }
}

/** The limit field an API refusal of `agin_limits` is about (per day unless it names per_minute). */
function aginLimitField(body) {
  return /per_minute/.test(JSON.stringify(body?.details ?? body?.message ?? ''))
    ? form.elements.agin_per_minute
    : form.elements.agin_per_day;
}

// Errors update while typing once shown (not on blur: a message appearing under a field would move
// the button away from a pointer that is about to click it).
for (const name of FIELDS)
  form.elements[name].addEventListener('input', (e) => e.target.getAttribute('aria-invalid') && clientCheck());

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const first = clientCheck();
  if (first) {
    first.focus();
    return;
  }
  // The optional fields are checked by the API only: what it said of the last try goes.
  for (const name of ['audience', 'purpose', 'risk', 'required_credentials', 'agin_per_minute', 'agin_per_day'])
    fieldError(form.elements[name], '');
  const button = form.querySelector('button');
  button.disabled = true;
  say(result, text.listing);
  try {
    const res = await requestJson('POST', '/api/mcp/listings', body());
    if (res.status === 201 || res.status === 200) {
      say(result, text.listed);
      await follow(res.body.id);
      return;
    }
    if (res.status === 409) return say(result, res.body?.message || text.conflict, 'error');
    if (res.status === 429) return say(result, fill(text.tooMany, { seconds: retryAfter(res) }), 'warn');
    if (res.status === 400 || res.status === 413) {
      const problems = fieldProblems(res.body);
      let focus = null;
      for (const [name, message] of Object.entries(problems)) {
        // A refused limit is said at its field (the API names it agin_limits.per_day).
        const input = form.elements[name] || (name === 'agin_limits' ? aginLimitField(res.body) : undefined);
        if (input) {
          fieldError(input, message);
          focus = focus || input;
        }
      }
      say(result, res.body?.message || text.invalid, 'error');
      if (focus) focus.focus();
      return;
    }
    say(result, text.failed, 'error');
  } catch {
    say(result, text.failed, 'error');
  } finally {
    button.disabled = false;
  }
});

if (location.hash === '#list-title') form.elements.provider.focus();

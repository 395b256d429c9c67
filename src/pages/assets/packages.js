/* global document */
// Packages: the healthy sources list, one package, and the source registration form with the
// pipeline stage of a submitted source (polled from GET /api/agpk/sources/<id>); the list is
// fetched again once that source leaves the pipeline, so a healthy one appears without a reload.
import {
  checkFields,
  currentSession,
  el,
  fieldError,
  fieldProblems,
  fill,
  pageData,
  requestJson,
  retryAfter,
  say,
} from './common.js';

const { text } = pageData();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A source's trust as a badge, in the page's language (the spec's labels in English). It says who
 * registered the source, not that the package is good: coloured only for a healthy source, so a
 * rejected package's "known in-site user" does not read as an endorsement.
 */
function trustBadge(trust, healthy = true) {
  return el('span', { class: healthy ? `badge badge-${trust}` : 'badge' }, text.trustLabels[trust] || trust);
}

/** A source's status and pipeline stage, in the page's language: `healthy (live)`. */
function statusLine(source) {
  return `${text.statuses[source.status] || source.status} (${text.stages[source.stage] || source.stage})`;
}

/**
 * A package id as code that wraps after its dots (`com.example.` / `hello`) before anywhere else,
 * so a narrow column shows it in readable pieces rather than a letter a line.
 */
function packageIdCode(id) {
  const parts = String(id).split(/(?<=\.)/);
  return el('code', {}, ...parts.flatMap((part, i) => (i === 0 ? [part] : [el('wbr'), part])));
}

function installLine(source) {
  return `plaza agpk install ${source.package_id}`;
}

async function listSources() {
  const box = document.getElementById('sources');
  if (!box) return;
  const res = await requestJson('GET', '/share/v1/agpk/sources').catch(() => null);
  if (!res || res.status === 404) return box.replaceChildren(el('p', { class: 'notice' }, text.unavailable));
  if (!res.ok) return box.replaceChildren(el('p', {}, text.unavailable));
  const sources = res.body.sources || [];
  if (sources.length === 0) return box.replaceChildren(el('p', {}, text.none));
  const labels = [text.name, 'id', text.version, text.vendor, text.trust, text.summary];
  // Each cell carries its column's name: on a phone the table stacks into one card per source,
  // each cell a labelled line (site.css, table.stack).
  const cell = (column, content, attrs = {}) => el('td', { 'data-label': labels[column], ...attrs }, content);
  const rows = sources.map((s) =>
    el(
      'tr',
      { 'data-package-id': s.package_id },
      cell(0, el('a', { href: `/packages/${encodeURIComponent(s.package_id)}` }, s.name), { class: 'break' }),
      cell(1, packageIdCode(s.package_id), { class: 'package-id' }),
      cell(2, s.version),
      cell(3, s.vendor || s.vendor_name),
      cell(4, trustBadge(s.trust)),
      cell(5, s.summary, { class: 'break' }),
    ),
  );
  const head = el('tr', {}, ...labels.map((h) => el('th', { scope: 'col' }, h)));
  box.replaceChildren(
    el(
      'div',
      { class: 'table-wrap' },
      el(
        'table',
        { class: 'stack' },
        el('caption', { class: 'sr-only' }, text.healthy),
        el('thead', {}, head),
        el('tbody', {}, ...rows),
      ),
    ),
  );
}

async function showPackage(box) {
  const id = box.dataset.packageId;
  const res = await requestJson('GET', `/api/agpk/sources?package_id=${encodeURIComponent(id)}&limit=10`).catch(
    () => null,
  );
  if (!res || res.status === 404) return box.replaceChildren(el('p', { class: 'notice' }, text.unavailable));
  const sources = res.ok ? res.body.sources || [] : [];
  const source = sources.find((s) => s.status === 'healthy') || sources[0];
  if (!source) return box.replaceChildren(el('p', {}, text.notFound));
  document.getElementById('package-title').textContent = source.name;
  const facts = el('dl', { class: 'facts' });
  const add = (label, value) =>
    value !== undefined && value !== null && value !== '' && facts.append(el('dt', {}, label), el('dd', {}, value));
  add('id', el('code', {}, source.package_id));
  add(text.version, source.version);
  add(text.vendor, source.vendor || source.vendor_name);
  const installable = source.status === 'healthy';
  add(text.trust, trustBadge(source.trust, installable));
  add(text.status, statusLine(source));
  add(text.summary, source.summary);
  add('sha256', el('code', {}, source.sha256));
  add('URI', el('code', {}, source.download_uri));
  const parts = [facts];
  const commands = Array.isArray(source.commands) ? source.commands : [];
  if (commands.length)
    parts.push(
      el('h2', {}, text.commands),
      el(
        'ul',
        { class: 'commands' },
        ...commands.map((c) => el('li', {}, el('code', {}, c.id || String(c)), c.summary ? ` — ${c.summary}` : '')),
      ),
    );
  const findings = Array.isArray(source.findings) ? source.findings : [];
  if (findings.length) {
    parts.push(
      el('h2', {}, text.findings),
      el(
        'ul',
        { class: 'findings' },
        ...findings.map((f) =>
          el(
            'li',
            {},
            el('span', { class: `badge badge-${f.severity}` }, f.severity),
            ' ',
            el('code', {}, f.id),
            ` — ${f.message}`,
          ),
        ),
      ),
    );
  }
  // The market installs only healthy sources (its share list holds nothing else): any other
  // status gets the reason instead of a command that would fail.
  if (installable)
    parts.push(
      el('h2', {}, text.install),
      el('pre', {}, el('code', {}, installLine(source))),
      el('p', { class: 'hint' }, text.installHint),
    );
  else
    parts.push(
      el('h2', {}, text.install),
      el('p', { class: 'notice', id: 'not-installable' }, fill(text.notInstallable, { status: statusLine(source) })),
      source.reason ? el('p', {}, `${text.reason}: ${source.reason}`) : '',
    );
  box.replaceChildren(...parts);
}

async function follow(id, result) {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const res = await requestJson('GET', `/api/agpk/sources/${encodeURIComponent(id)}`).catch(() => null);
    const source = res?.ok ? res.body.source : null;
    if (source) {
      const line = fill(text.submitted, { stage: statusLine(source) });
      result.className = 'result';
      result.replaceChildren(
        el('p', { id: 'source-stage', 'data-status': source.status }, line),
        source.reason ? el('p', {}, source.reason) : '',
      );
      if (source.status !== 'registered') return listSources();
    }
    await sleep(attempt < 10 ? 1000 : 3000);
  }
}

/** The form's note on trust: the page says the anonymous case; a signed-in visitor registers as known. */
async function showRegistrant() {
  if (await currentSession()) document.getElementById('register-intro').textContent = text.registerIntroSignedIn;
}

const form = document.getElementById('source-form');
if (form) {
  showRegistrant();
  const result = document.getElementById('source-result');
  const FIELDS = ['package_id', 'name', 'version', 'vendor_name', 'download_uri', 'sha256'];
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const first = checkFields(form, FIELDS);
    if (first) return first.focus();
    const body = { summary: form.elements.summary.value.trim() };
    for (const name of FIELDS) body[name] = form.elements[name].value.trim();
    const session = await currentSession();
    const res = session
      ? await requestJson('POST', '/api/agpk/sources/tool', body, { 'x-csrf-token': session.session.csrf_token })
      : await requestJson('POST', '/api/agpk/sources', body);
    if (res.status === 404) return say(result, text.unavailable, 'warn');
    if (res.status === 429) return say(result, fill(text.tooMany, { seconds: retryAfter(res) }), 'warn');
    if (!res.ok) {
      for (const [name, message] of Object.entries(fieldProblems(res.body)))
        if (form.elements[name]) fieldError(form.elements[name], message);
      return say(result, res.body?.message || 'error', 'error');
    }
    await follow(res.body.source.id, result);
  });
}

const detail = document.getElementById('package-detail');
if (detail) showPackage(detail);
else listSources();

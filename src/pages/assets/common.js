/* global document */
// Shared helpers of the page scripts: page strings, JSON requests, field errors.

/** The page's `page-data` JSON block (locale and localized strings). */
export function pageData() {
  const node = document.getElementById('page-data');
  return node ? JSON.parse(node.textContent || '{}') : {};
}

/** Fills `{name}` placeholders. */
export function fill(template, values) {
  return String(template).replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** Sends JSON and reads JSON back; never throws for HTTP errors. */
export async function requestJson(method, url, body, headers = {}) {
  // Revalidate cached answers (e.g. the share list's ETag), so a page never shows a stale list.
  const init = {
    method,
    headers: { accept: 'application/json', ...headers },
    credentials: 'same-origin',
    cache: 'no-cache',
  };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const json = await res.json().catch(() => null);
  return { status: res.status, ok: res.ok, headers: res.headers, body: json };
}

/** Seconds to wait from a 429 answer (Retry-After, else one minute). */
export function retryAfter(res) {
  const value = Number(res.headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : 60;
}

/**
 * What is wrong with a form field that fails the browser's checks, in the page's language (the
 * browser's own validationMessage speaks the browser's): missing, not an e-mail address, or
 * not the expected form (the field's hint says which, when it has one).
 */
export function invalidMessage(input) {
  const form = pageData().form || {};
  if (input.validity.valueMissing || input.value.trim() === '') return form.required;
  if (input.type === 'email' && input.validity.typeMismatch) return form.email;
  const hint = document.getElementById(`${input.id}-hint`);
  return hint?.textContent || form.invalid;
}

/** Shows (or clears, with an empty message) the inline error of `input`. */
export function fieldError(input, message) {
  const box = document.getElementById(`${input.id}-error`);
  if (message) {
    input.setAttribute('aria-invalid', 'true');
    if (box) {
      box.textContent = message;
      box.hidden = false;
    }
  } else {
    input.removeAttribute('aria-invalid');
    if (box) {
      box.textContent = '';
      box.hidden = true;
    }
  }
}

/**
 * Checks the named fields of `form` as the browser would (and a blank value as missing), showing
 * each one's inline error or clearing it; returns the first field in error, or null.
 */
export function checkFields(form, names) {
  let first = null;
  for (const name of names) {
    const input = form.elements[name];
    const ok = input.value.trim() !== '' && input.validity.valid;
    fieldError(input, ok ? '' : invalidMessage(input));
    if (!ok && !first) first = input;
  }
  return first;
}

/** Field problems of an API 400 answer as `{field: message}` (website and marketplace shapes). */
export function fieldProblems(body) {
  const out = {};
  const details = body && body.details;
  const list = Array.isArray(details) ? details : details && Array.isArray(details.issues) ? details.issues : [];
  for (const issue of list) {
    const path = Array.isArray(issue.path) ? issue.path[0] : String(issue.path || '').split('.')[0];
    if (path && !(path in out)) out[path] = issue.message;
  }
  if (body && body.error && body.error.param && !(body.error.param in out)) out[body.error.param] = body.message;
  // Some refusals name the field only in the message: "Invalid listing: summary: contains …".
  const named =
    list.length === 0 && body && typeof body.message === 'string'
      ? /^[^:]+:\s*([a-z_]+):\s*(.+)$/.exec(body.message)
      : null;
  if (named && !(named[1] in out)) out[named[1]] = named[2];
  return out;
}

/** Whether this browser holds a session's readable CSRF cookie (plain or `__Host-` over HTTPS). */
export function maybeSignedIn() {
  return document.cookie.split(';').some((pair) => /^\s*(__Host-)?plaza_csrf=/.test(pair));
}

/**
 * The visitor's session (`{account, session: {csrf_token}}`), or null when signed out. Without the
 * CSRF cookie the session route is not asked: signed out it answers 401, an error in the console.
 */
export async function currentSession() {
  if (!maybeSignedIn()) return null;
  const res = await requestJson('GET', '/api/auth/session').catch(() => null);
  return res?.ok && res.body?.session?.csrf_token ? res.body : null;
}

/** Replaces an element's content with a message (text only). */
export function say(node, message, kind = '') {
  // An empty message clears the box, frame included.
  node.className = message ? `result ${kind}`.trim() : '';
  node.textContent = message;
}

/** Disables a button for `seconds`, counting down in its label. */
export function cooldown(button, seconds, label) {
  button.disabled = true;
  let left = seconds;
  const original = button.textContent;
  const tick = () => {
    if (left <= 0) {
      button.disabled = false;
      button.textContent = original;
      return;
    }
    button.textContent = `${label} (${left})`;
    left -= 1;
    setTimeout(tick, 1000);
  };
  tick();
}

/** Element builder: `el('li', {class: 'x'}, 'text', child)`; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
  return node;
}

/** Session-scoped storage that survives a blocked storage API. */
export const session = {
  get(key) {
    try {
      return sessionStorage.getItem(key);
    } catch {
      return null;
    }
  },
  set(key, value) {
    try {
      sessionStorage.setItem(key, value);
    } catch {
      /* storage disabled: keep working without it */
    }
  },
};

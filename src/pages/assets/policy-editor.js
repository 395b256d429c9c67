// An editor of one policy document (docs/gateway.md "Who may call what"): its rules with a Remove
// button each, a form that adds a rule, and a form for the default and the limits. Every change is
// saved at once (the whole document is PUT) and the panel is drawn again from the server's answer,
// so what is shown is what the gateway holds.
import { el, fieldError, fill } from './common.js';

const ANNOTATIONS = ['destructiveHint', 'readOnlyHint', 'idempotentHint', 'openWorldHint'];

/** A whole number of calls from 1, '' for none, or NaN when it is neither. */
function calls(input) {
  const value = input.value.trim();
  if (value === '') return '';
  return /^\d{1,9}$/.test(value) && Number(value) >= 1 ? Number(value) : Number.NaN;
}

/** `crm:10/50, mail:/20` → per_provider, or a string naming the entry that is not one. */
function providerLimits(value) {
  const out = {};
  for (const entry of value
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9-]{1,62}):\s*(\d*)\s*\/\s*(\d*)$/.exec(entry);
    if (!match || (match[2] === '' && match[3] === '') || match[2] === '0' || match[3] === '0') return entry;
    out[match[1]] = {
      ...(match[2] ? { per_minute: Number(match[2]) } : {}),
      ...(match[3] ? { per_day: Number(match[3]) } : {}),
    };
  }
  return out;
}

const providerLimitsText = (perProvider = {}) =>
  Object.entries(perProvider)
    .map(([slug, l]) => `${slug}:${l.per_minute ?? ''}/${l.per_day ?? ''}`)
    .join(', ');

/** One rule in words: "Allow crm / read_* — only tools with destructiveHint = true". */
export function ruleText(rule, t) {
  const when = Object.entries(rule.annotations || {})
    .map(([name, value]) => `${name} = ${value}`)
    .join(', ');
  return `${rule.effect === 'deny' ? t.deny : t.allow} ${rule.provider} / ${rule.tool}${when ? ` — ${fill(t.onlyWhen, { when })}` : ''}`;
}

function field(id, label, input, hint) {
  input.id = id;
  const describedBy = [hint ? `${id}-hint` : '', `${id}-error`].filter(Boolean).join(' ');
  input.setAttribute('aria-describedby', describedBy);
  return el(
    'div',
    { class: 'field' },
    el('label', { for: id }, label),
    input,
    hint ? el('p', { id: `${id}-hint`, class: 'hint' }, hint) : '',
    el('p', { id: `${id}-error`, class: 'field-error', hidden: true }),
  );
}

function select(name, options, value = '') {
  const node = el('select', { name });
  for (const [v, label] of options) node.append(el('option', { value: v, selected: v === value }, label));
  return node;
}

/**
 * Draws the editor of `doc` (null: none yet) into `root`. `id` makes the element ids unique on the
 * page; `label` names what the policy is of (for screen readers, where several editors share a
 * page); `status` is a live region that outlives the redraws; `save(doc, focus)` PUTs the document,
 * draws the editor again (with the field named `focus` focused) and resolves to '' or the refusal;
 * `onRemove()` removes the policy.
 */
export function drawPolicyEditor(root, { id, label, doc, t, status, save, onRemove, focus }) {
  const policy = { rules: [], ...(doc || {}) };
  // `save` draws the editor again on success (focus back on `then`); a refusal is said where it belongs.
  const write = async (next, input, then) => {
    status.textContent = t.saving;
    const problem = await save(next, then);
    status.textContent = problem && !input ? problem : problem ? '' : t.saved;
    if (problem && input) {
      fieldError(input, problem);
      input.focus();
    }
  };

  const rules = el(
    'ul',
    { class: 'policy-rules', 'aria-label': fill(t.rulesOf, { name: label }) },
    ...policy.rules.map((rule, index) =>
      el(
        'li',
        { 'data-rule': index },
        ruleText(rule, t),
        ' ',
        el(
          'button',
          { type: 'button', class: 'link remove-rule', 'aria-label': fill(t.removeRule, { rule: ruleText(rule, t) }) },
          t.remove,
        ),
      ),
    ),
  );
  rules.addEventListener('click', (event) => {
    const button = event.target.closest('button.remove-rule');
    if (!button) return;
    const index = Number(button.closest('li').dataset.rule);
    write({ ...policy, rules: policy.rules.filter((_, i) => i !== index) }, undefined, 'provider');
  });

  const provider = el('input', { name: 'provider', required: true, maxlength: 200, autocomplete: 'off' });
  const tool = el('input', { name: 'tool', required: true, maxlength: 200, autocomplete: 'off' });
  const effect = select('effect', [
    ['allow', t.allow],
    ['deny', t.deny],
  ]);
  const annotation = select('annotation', [
    ['', t.anyTool],
    ...ANNOTATIONS.map((a) => [a, fill(t.onlyHint, { hint: a })]),
  ]);
  const ruleForm = el(
    'form',
    { class: 'rule-form', novalidate: true, 'aria-label': fill(t.addRuleTo, { name: label }) },
    field(`${id}-effect`, t.effect, effect),
    field(`${id}-provider`, t.provider, provider, t.providerHint),
    field(`${id}-tool`, t.tool, tool, t.toolHint),
    field(`${id}-annotation`, t.annotation, annotation),
    el('button', { type: 'submit' }, t.addRule),
  );
  ruleForm.addEventListener('submit', (event) => {
    event.preventDefault();
    for (const input of [provider, tool]) fieldError(input, input.value.trim() ? '' : t.required);
    const empty = [provider, tool].find((input) => !input.value.trim());
    if (empty) return empty.focus();
    const rule = { effect: effect.value, provider: provider.value.trim(), tool: tool.value.trim() };
    if (annotation.value) rule.annotations = { [annotation.value]: true };
    write({ ...policy, rules: [...policy.rules, rule] }, provider, 'provider');
  });

  const limits = policy.limits || {};
  const byDefault = select(
    'default',
    [
      ['', t.defaultUnset],
      ['allow', t.defaultAllow],
      ['deny', t.defaultDeny],
    ],
    policy.default || '',
  );
  const perMinute = el('input', { name: 'per_minute', inputmode: 'numeric', value: limits.per_minute ?? '' });
  const perDay = el('input', { name: 'per_day', inputmode: 'numeric', value: limits.per_day ?? '' });
  const perProvider = el('input', { name: 'per_provider', value: providerLimitsText(limits.per_provider) });
  const limitsForm = el(
    'form',
    { class: 'limits-form', novalidate: true, 'aria-label': fill(t.limitsOf, { name: label }) },
    field(`${id}-default`, t.default, byDefault),
    field(`${id}-per-minute`, t.perMinute, perMinute, t.noLimitHint),
    field(`${id}-per-day`, t.perDay, perDay, t.noLimitHint),
    field(`${id}-per-provider`, t.perProvider, perProvider, t.perProviderHint),
    el('button', { type: 'submit' }, t.saveLimits),
  );
  limitsForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const minute = calls(perMinute);
    const day = calls(perDay);
    const providers = providerLimits(perProvider.value);
    fieldError(perMinute, Number.isNaN(minute) ? t.wholeNumber : '');
    fieldError(perDay, Number.isNaN(day) ? t.wholeNumber : '');
    fieldError(perProvider, typeof providers === 'string' ? fill(t.badProviderLimit, { entry: providers }) : '');
    const wrong = [
      [perMinute, Number.isNaN(minute)],
      [perDay, Number.isNaN(day)],
      [perProvider, typeof providers === 'string'],
    ].find(([, bad]) => bad);
    if (wrong) return wrong[0].focus();
    const next = { rules: policy.rules };
    if (byDefault.value) next.default = byDefault.value;
    const nextLimits = {
      ...(minute !== '' ? { per_minute: minute } : {}),
      ...(day !== '' ? { per_day: day } : {}),
      ...(Object.keys(providers).length > 0 ? { per_provider: providers } : {}),
    };
    if (Object.keys(nextLimits).length > 0) next.limits = nextLimits;
    write(next, perDay, 'per_day');
  });

  root.replaceChildren(
    el('h4', {}, t.rules),
    policy.rules.length > 0 ? rules : el('p', { class: 'muted small' }, t.noRules),
    ruleForm,
    el('h4', {}, t.defaultAndLimits),
    limitsForm,
    doc && onRemove
      ? el(
          'p',
          {},
          el(
            'button',
            { type: 'button', class: 'link remove-policy', 'aria-label': fill(t.removePolicyOf, { name: label }) },
            t.removePolicy,
          ),
        )
      : '',
  );
  root.querySelector('button.remove-policy')?.addEventListener('click', async () => {
    status.textContent = t.saving;
    const problem = await onRemove();
    status.textContent = problem || t.removed;
  });
  if (focus) root.querySelector(`[name="${focus}"]`)?.focus();
}

/** One usage window in words and, when it has a limit, a meter. */
function usageRow(name, window, t) {
  const labelId = `usage-${Math.random().toString(36).slice(2, 10)}`;
  const used = window?.used ?? 0;
  const limit = window?.limit ?? null;
  const words =
    limit === null
      ? fill(t.usedNoLimit, { name, used })
      : fill(t.usedOf, { name, used, limit, left: Math.max(0, limit - used) });
  return el(
    'li',
    { class: 'usage-row', 'data-used': used, 'data-limit': limit ?? '' },
    el('span', { id: labelId }, words),
    limit === null
      ? ''
      : el('meter', {
          min: 0,
          max: limit,
          value: Math.min(used, limit),
          high: Math.ceil(limit * 0.8),
          optimum: 0,
          'aria-labelledby': labelId,
        }),
  );
}

/** The calls an agent made against each of its limits (the `usage` of GET /api/agents/:id/policy). */
export function usageList(usage, t, label) {
  const list = el('ul', { class: 'usage', 'aria-label': fill(t.usageOf, { name: label }) });
  list.append(usageRow(t.thisMinute, usage?.minute, t), usageRow(t.today, usage?.day, t));
  for (const [slug, u] of Object.entries(usage?.per_provider || {})) {
    list.append(usageRow(fill(t.providerMinute, { provider: slug }), u.minute, t));
    list.append(usageRow(fill(t.providerDay, { provider: slug }), u.day, t));
  }
  return list;
}

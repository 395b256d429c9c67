// The Account page's policies: per agent, a "Policy and limits" disclosure (its rules, default and
// limits, and its calls against each limit, GET|PUT|DELETE /api/agents/:id/policy); and the
// account's default policy and account-wide ceiling (GET|PUT /api/account/agent-policy). All
// through the session cookie and its CSRF header, as the agents themselves are.
import { el, fieldError, fill, requestJson } from './common.js';
import { drawPolicyEditor, ruleText, usageList } from './policy-editor.js';

/**
 * Adds the disclosure to each active agent's item of `list`; its content loads when it is opened
 * (and again after each change). `refusal(res)` says what went wrong in the page's language.
 */
export function attachAgentPolicies(list, agents, { t, csrf, refusal }) {
  for (const agent of agents.filter((a) => a.status === 'active')) {
    const item = [...list.querySelectorAll('li[data-agent-id]')].find((li) => li.dataset.agentId === agent.id);
    if (!item) continue;
    const panel = el('div', { class: 'policy-panel' });
    const status = el('p', { class: 'policy-status', role: 'status' });
    const details = el(
      'details',
      { class: 'policy' },
      el('summary', {}, t.policyAndLimits, el('span', { class: 'sr-only' }, ` — ${agent.display_name}`)),
      panel,
      status,
    );
    item.append(details);
    const path = `/api/agents/${encodeURIComponent(agent.id)}/policy`;
    // One set of handlers for every redraw of this agent's panel.
    const handlers = {
      t,
      status,
      save: async (doc, focus) => {
        const res = await requestJson('PUT', path, doc, { 'x-csrf-token': csrf() });
        if (!res.ok) return refusal(res, t.refusedPolicy);
        drawAgentPanel(panel, agent, res.body.data, handlers, focus);
        return '';
      },
      remove: async () => {
        const res = await requestJson('DELETE', path, undefined, { 'x-csrf-token': csrf() });
        if (!res.ok) return refusal(res);
        await show();
        return '';
      },
    };
    const show = async () => {
      const res = await requestJson('GET', path);
      if (!res.ok) return panel.replaceChildren(el('p', { class: 'field-error' }, refusal(res)));
      drawAgentPanel(panel, agent, res.body.data, handlers);
    };
    details.addEventListener('toggle', () => {
      if (details.open) show();
    });
  }
}

function drawAgentPanel(panel, agent, data, handlers, focus) {
  const { t } = handlers;
  const editor = el('div', { class: 'policy-editor' });
  const own = data.policy;
  const effective = data.effective || { rules: [] };
  panel.replaceChildren(
    el('p', { class: 'policy-source small' }, own ? t.ownPolicy : t.noOwnPolicy),
    own
      ? ''
      : el(
          'ul',
          { class: 'small', 'aria-label': fill(t.appliedTo, { name: agent.display_name }) },
          ...(effective.rules.length > 0
            ? effective.rules.map((r) => el('li', {}, ruleText(r, t)))
            : [el('li', {}, t.everythingAllowed)]),
        ),
    el('h4', {}, t.usage),
    usageList(data.usage, t, agent.display_name),
    editor,
  );
  drawPolicyEditor(editor, {
    id: `pol-${agent.id}`,
    label: agent.display_name,
    doc: own,
    t,
    status: handlers.status,
    focus,
    save: handlers.save,
    onRemove: handlers.remove,
  });
}

/**
 * The account's default policy (what agents without their own follow) and its ceiling (calls per
 * minute and per day of all its agents together), drawn into `root`.
 */
export async function loadAccountPolicy(root, status, { t, csrf, refusal }, focus) {
  const res = await requestJson('GET', '/api/account/agent-policy');
  if (!res.ok) return root.replaceChildren(el('p', { class: 'field-error' }, refusal(res)));
  const data = res.body.data ?? res.body;
  const put = async (next, then) => {
    const answer = await requestJson('PUT', '/api/account/agent-policy', next, { 'x-csrf-token': csrf() });
    if (!answer.ok) return refusal(answer, t.refusedPolicy);
    await loadAccountPolicy(root, status, { t, csrf, refusal }, then);
    return '';
  };
  const editor = el('div', { class: 'policy-editor' });
  const ceiling = ceilingForm(data.limits || {}, t, status, (limits) =>
    put({ default_policy: data.default_policy ?? null, limits }, 'ceiling_per_day'),
  );
  root.replaceChildren(
    el('h3', {}, t.defaultPolicy),
    el('p', { class: 'small' }, t.defaultPolicyLead),
    editor,
    el('h3', {}, t.ceiling),
    el('p', { class: 'small' }, t.ceilingLead),
    ceiling,
  );
  drawPolicyEditor(editor, {
    id: 'account-default',
    label: t.defaultPolicy,
    doc: data.default_policy ?? null,
    t,
    status,
    focus,
    save: (doc, then) => put({ default_policy: doc, limits: data.limits || {} }, then),
    onRemove: () => put({ default_policy: null, limits: data.limits || {} }),
  });
  if (focus === 'ceiling_per_day') ceiling.elements.ceiling_per_day.focus();
}

function ceilingForm(limits, t, status, save) {
  const perMinute = el('input', {
    id: 'ceiling-per-minute',
    name: 'ceiling_per_minute',
    inputmode: 'numeric',
    value: limits.per_minute ?? '',
    'aria-describedby': 'ceiling-per-minute-error',
  });
  const perDay = el('input', {
    id: 'ceiling-per-day',
    name: 'ceiling_per_day',
    inputmode: 'numeric',
    value: limits.per_day ?? '',
    'aria-describedby': 'ceiling-per-day-error',
  });
  const form = el(
    'form',
    { id: 'ceiling-form', novalidate: true },
    ...[
      [perMinute, t.perMinute],
      [perDay, t.perDay],
    ].map(([input, label]) =>
      el(
        'div',
        { class: 'field' },
        el('label', { for: input.id }, label),
        input,
        el('p', { id: `${input.id}-error`, class: 'field-error', hidden: true }),
      ),
    ),
    el('button', { type: 'submit' }, t.saveCeiling),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const next = {};
    for (const [input, key] of [
      [perMinute, 'per_minute'],
      [perDay, 'per_day'],
    ]) {
      const value = input.value.trim();
      const ok = value === '' || (/^\d{1,9}$/.test(value) && Number(value) >= 1);
      fieldError(input, ok ? '' : t.wholeNumber);
      if (!ok) return input.focus();
      if (value !== '') next[key] = Number(value);
    }
    status.textContent = t.saving;
    const problem = await save(next);
    status.textContent = problem || t.saved;
  });
  return form;
}

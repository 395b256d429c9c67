/* global document */
// Home: the intent box and the lead form, sent to the public website API.
import { cooldown, el, fieldError, fieldProblems, fill, pageData, requestJson, retryAfter, say } from './common.js';

const { locale, text } = pageData();
const query = `?locale=${encodeURIComponent(locale)}`;

const intentForm = document.getElementById('intent-form');
const intentResult = document.getElementById('intent-result');
const prompt = document.getElementById('intent-prompt');

intentForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = prompt.value.trim();
  if (!value) {
    fieldError(prompt, text.intentEmpty);
    prompt.focus();
    return;
  }
  fieldError(prompt, '');
  const button = intentForm.querySelector('button');
  button.disabled = true;
  try {
    const res = await requestJson('POST', `/api/agent/intent${query}`, { prompt: value });
    if (res.status === 429) {
      say(intentResult, fill(text.tooMany, { seconds: retryAfter(res) }), 'warn');
      cooldown(button, retryAfter(res), button.textContent);
      return;
    }
    if (res.status === 400) {
      fieldError(prompt, res.body?.message || text.intentEmpty);
      return;
    }
    if (!res.ok) {
      say(intentResult, text.failed, 'error');
      return;
    }
    const r = res.body;
    intentResult.className = 'result';
    intentResult.replaceChildren(
      el('h3', {}, r.scenario.name),
      el('p', { class: 'muted' }, r.scenario.headline),
      el('p', { id: 'intent-answer' }, r.answer),
      el('p', {}, el('strong', {}, `${text.recommended}: `), r.recommendedProducts.join(' · ')),
      el('p', {}, el('strong', {}, `${text.plan}: `), r.planName),
    );
    const select = document.getElementById('lead-scenario');
    if (select && !select.value) select.value = r.scenario.id;
  } catch {
    say(intentResult, text.failed, 'error');
  } finally {
    if (!button.textContent.includes('(')) button.disabled = false;
  }
});

const leadForm = document.getElementById('lead-form');
const leadResult = document.getElementById('lead-result');
const email = document.getElementById('lead-email');
const scenario = document.getElementById('lead-scenario');

function checkEmail() {
  const ok = email.value.trim() !== '' && email.validity.valid;
  fieldError(email, ok ? '' : text.emailInvalid);
  return ok;
}
function checkScenario() {
  const ok = scenario.value !== '';
  fieldError(scenario, ok ? '' : text.scenarioMissing);
  return ok;
}
email.addEventListener('input', () => email.getAttribute('aria-invalid') && checkEmail());
scenario.addEventListener('change', checkScenario);

leadForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const emailOk = checkEmail();
  const scenarioOk = checkScenario();
  if (!emailOk || !scenarioOk) {
    (emailOk ? scenario : email).focus();
    return;
  }
  const body = { email: email.value.trim(), scenario: scenario.value };
  for (const name of ['company', 'teamSize', 'painPoint']) {
    const value = leadForm.elements[name].value.trim();
    if (value) body[name] = value;
  }
  const button = leadForm.querySelector('button');
  const label = button.textContent;
  button.disabled = true;
  button.textContent = text.sending;
  let waiting = 0;
  try {
    const res = await requestJson('POST', `/api/leads${query}`, body);
    if (res.status === 429) {
      waiting = retryAfter(res);
      say(leadResult, fill(text.tooMany, { seconds: waiting }), 'warn');
      return;
    }
    if (res.status === 400) {
      const problems = fieldProblems(res.body);
      let first = null;
      for (const [name, message] of Object.entries(problems)) {
        const input = leadForm.elements[name];
        if (input) {
          fieldError(input, name === 'email' ? text.emailInvalid : message);
          first = first || input;
        }
      }
      if (first) first.focus();
      else say(leadResult, res.body?.message || text.failed, 'error');
      return;
    }
    if (!res.ok) {
      say(leadResult, text.failed, 'error');
      return;
    }
    leadResult.className = 'result';
    leadResult.replaceChildren(
      el('p', {}, el('strong', {}, text.leadReceived)),
      el('p', {}, res.body.nextStep),
      el(
        'p',
        {},
        `${text.recommended}: ${res.body.recommendedProducts.join(' · ')} — ${text.plan}: ${res.body.planName}`,
      ),
    );
  } catch {
    say(leadResult, text.failed, 'error');
  } finally {
    button.textContent = label;
    if (waiting > 0) cooldown(button, waiting, label);
    else button.disabled = false;
  }
});

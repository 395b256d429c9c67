/* global document */
// Assistant: a 24-hour guest token (kept for the tab), then streamed chat completions.
import { el, fieldError, fill, pageData, requestJson, retryAfter, session } from './common.js';

const { text, locale } = pageData();
const log = document.getElementById('chat-log');
const form = document.getElementById('chat-form');
const input = document.getElementById('chat-input');
const history = [];

async function guestToken() {
  const saved = JSON.parse(session.get('plaza_guest') || 'null');
  if (saved && saved.expiresAt > Date.now() + 60_000) return saved.token;
  const res = await requestJson('POST', '/api/auth/guest-token', {});
  if (!res.ok || !res.body?.data?.token) throw new Error(text.tokenFailed);
  const { token, expiresIn } = res.body.data;
  session.set('plaza_guest', JSON.stringify({ token, expiresAt: Date.now() + expiresIn * 1000 }));
  return token;
}

function bubble(who, cls, content) {
  const body = el('span', { class: 'text' }, content);
  const item = el('li', { class: cls }, el('span', { class: 'who' }, who), body);
  log.append(item);
  return { item, body };
}

/** Shows answer text with `**bold**` spans as <strong>; everything else stays plain text. */
function showAnswer(node, answer) {
  node.replaceChildren(...answer.split('**').map((part, i) => (i % 2 === 1 ? el('strong', {}, part) : part)));
}

/** Reads an OpenAI-style SSE stream, calling `onDelta` for every content delta. */
async function readStream(res, onDelta) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return true;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) onDelta(delta);
      }
    }
  }
}

async function ask(question, retried = false) {
  const token = await guestToken();
  const res = await fetch('/api/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'accept-language': locale },
    body: JSON.stringify({
      model: 'plaza-assistant',
      messages: [...history, { role: 'user', content: question }],
      stream: true,
    }),
  });
  if (res.status === 401 && !retried) {
    session.set('plaza_guest', 'null');
    return ask(question, true);
  }
  if (res.status === 429) throw new Error(fill(text.tooMany, { seconds: retryAfter(res) }));
  if (!res.ok || !res.body) throw new Error(text.failed);
  const { item, body } = bubble(text.bot, 'from-bot', '');
  item.setAttribute('aria-busy', 'true');
  let answer = '';
  try {
    const complete = await readStream(res, (delta) => {
      answer += delta;
      showAnswer(body, answer);
    });
    if (!complete) throw new Error(text.failed);
  } finally {
    item.removeAttribute('aria-busy');
    item.dataset.done = 'true';
  }
  history.push({ role: 'user', content: question }, { role: 'assistant', content: answer });
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (!question) {
    fieldError(input, text.label);
    input.focus();
    return;
  }
  fieldError(input, '');
  const button = form.querySelector('button');
  button.disabled = true;
  bubble(text.you, 'from-user', question);
  input.value = '';
  try {
    await ask(question);
  } catch (error) {
    fieldError(input, error instanceof Error ? error.message : text.failed);
    input.value = question;
  } finally {
    button.disabled = false;
    input.focus();
  }
});

input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    form.requestSubmit();
  }
});

import type { PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/** The assistant: a chat log and a question form; assistant.js takes a guest token and streams answers. */
export function assistantBody(copy: PageCopy): Html {
  const a = copy.assistant;
  return html`
<h1>${a.title}</h1>
<p class="lead">${a.lead}</p>
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<section class="card chat" aria-labelledby="chat-title">
  <h2 id="chat-title" class="sr-only">${a.title}</h2>
  <ol id="chat-log" class="chat-log" aria-live="polite" aria-relevant="additions"></ol>
  <form id="chat-form" class="chat-form">
    <label for="chat-input">${a.label}</label>
    <textarea id="chat-input" name="question" rows="2" required maxlength="4000" placeholder="${a.placeholder}" aria-describedby="chat-error"></textarea>
    <p id="chat-error" class="field-error" hidden></p>
    <button type="submit">${a.send}</button>
  </form>
</section>
`;
}

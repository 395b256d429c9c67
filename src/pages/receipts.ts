import type { PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/** The statuses a receipt can have: a call answered (ok, error) or refused by Plaza (denied, rate_limited). */
const RECEIPT_STATUSES = ['ok', 'error', 'denied', 'rate_limited'] as const;

/**
 * The receipts view: an API key (kept in session storage by receipts.js), filters, the account's
 * receipts (refusals by policy or limit among them, with their reason), and a per-receipt check of its inclusion proof against the signed checkpoint.
 */
export function receiptsBody(copy: PageCopy): Html {
  const r = copy.receipts;
  return html`
<h1>${r.title}</h1>
<p class="lead">${r.lead}</p>
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<form id="receipt-search" class="card search">
  <div class="field wide">
    <label for="r-key">${r.key}</label>
    <input id="r-key" name="key" type="password" autocomplete="off" required aria-describedby="r-key-hint r-key-error">
    <p id="r-key-hint" class="hint">${r.keyHint}</p>
    <p id="r-key-error" class="field-error" hidden></p>
  </div>
  <div class="field"><label for="r-tool">${r.tool}</label><input id="r-tool" name="tool"></div>
  <div class="field"><label for="r-provider">${r.provider}</label><input id="r-provider" name="provider"></div>
  <div class="field"><label for="r-agin">${r.agin}</label><input id="r-agin" name="agin_id"></div>
  <div class="field">
    <label for="r-status">${r.status}</label>
    <select id="r-status" name="status" aria-describedby="r-status-hint"><option value="">${r.any}</option>${RECEIPT_STATUSES.map((s) => html`<option value="${s}">${r.statuses[s]}</option>`)}</select>
    <p id="r-status-hint" class="hint">${r.statusHint}</p>
  </div>
  <button type="submit">${r.load}</button>
</form>
<div id="receipt-message" role="status" aria-live="polite"></div>
<div class="table-wrap">
<table id="receipt-table" hidden>
  <caption class="sr-only">${r.title}</caption>
  <thead><tr><th scope="col">${r.time}</th><th scope="col">${r.tool}</th><th scope="col">${r.provider}</th><th scope="col">${r.agin}</th><th scope="col">${r.status}</th><th scope="col">${r.outcome}</th><th scope="col"><span class="sr-only">${r.verify}</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
`;
}

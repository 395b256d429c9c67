/* global document */
// Receipts: the account's receipts (API key kept in this tab) and, per receipt, a check in the
// browser: leaf hash from the fields, RFC 9162 inclusion proof to the checkpoint's root, and the
// checkpoint's Ed25519 JWS against /.well-known/jwks.json.
import { el, fieldError, fill, pageData, requestJson, say, session } from './common.js';

const { text } = pageData();
const form = document.getElementById('receipt-search');
const message = document.getElementById('receipt-message');
const table = document.getElementById('receipt-table');
const keyInput = document.getElementById('r-key');
keyInput.value = session.get('plaza_api_key') || '';

const hex = (bytes) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
const fromHex = (h) => new Uint8Array(h.match(/../g).map((b) => parseInt(b, 16)));
const fromB64url = (s) =>
  Uint8Array.from(
    atob(
      s
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(s.length / 4) * 4, '='),
    ),
    (c) => c.charCodeAt(0),
  );
const b64url = (bytes) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

async function sha256(...parts) {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
}

/** The canonical receipt bytes (docs/receipts.md): sorted keys, seq as a decimal string. */
function canonical(r) {
  const fields = {
    account_id: r.account_id,
    agent_principal: r.agent_principal,
    agin_id: r.agin_id,
    call_id: r.call_id,
    latency_ms: r.latency_ms,
    outcome: r.outcome,
    provider: r.provider,
    result_digest: r.result_digest,
    seq: String(r.seq),
    status: r.status,
    time: new Date(r.time).toISOString(),
    tool: r.tool,
  };
  return new TextEncoder().encode(JSON.stringify(fields));
}

/** RFC 9162 §2.1.3.2 inclusion proof verification. */
async function rootFromProof(leaf, index, size, path) {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path.map(fromHex)) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(Uint8Array.of(1), p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await sha256(Uint8Array.of(1), r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? hex(r) : null;
}

async function checkSignature(checkpoint) {
  const [header, empty, signature] = checkpoint.signature.split('.');
  if (empty !== '' || !header || !signature) return 'signature is not a detached JWS';
  const protectedHeader = JSON.parse(new TextDecoder().decode(fromB64url(header)));
  if (
    protectedHeader.alg !== 'EdDSA' ||
    protectedHeader.kid !== checkpoint.key_id ||
    protectedHeader.typ !== 'plaza-receipts-checkpoint+jws'
  )
    return 'unexpected signature header';
  const jwks = await requestJson('GET', '/.well-known/jwks.json');
  const jwk = jwks.body?.keys?.find((k) => k.kid === checkpoint.key_id);
  if (!jwk) return `key ${checkpoint.key_id} is not published`;
  // Only a receipts key signs checkpoints (its purpose; before keys carried one, its kid prefix).
  if (jwk.purpose !== undefined ? jwk.purpose !== 'receipts' : !String(jwk.kid).startsWith('receipts_'))
    return 'the checkpoint is signed by a key that is not a receipts key';
  const key = await crypto.subtle.importKey(
    'jwk',
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x },
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  const payload = [
    'plaza-receipts-checkpoint/v1',
    `tree_size ${checkpoint.tree_size}`,
    `root_hash ${checkpoint.root_hash}`,
    `chain_head ${checkpoint.chain_head}`,
    `timestamp ${checkpoint.timestamp}`,
    '',
  ].join('\n');
  const signingInput = new TextEncoder().encode(`${header}.${b64url(new TextEncoder().encode(payload))}`);
  const ok = await crypto.subtle.verify({ name: 'Ed25519' }, key, fromB64url(signature), signingInput);
  return ok ? undefined : 'the checkpoint signature does not verify';
}

/** Verifies one proven receipt; resolves to undefined when everything holds, else the reason. */
async function verify(data) {
  const { receipt, inclusion, checkpoint } = data;
  const leaf = await sha256(Uint8Array.of(0), canonical(receipt));
  if (hex(leaf) !== receipt.leaf_hash) return 'the leaf hash does not match the receipt fields';
  if (inclusion.tree_size !== checkpoint.tree_size) return 'the proof is for another tree size than the checkpoint';
  const root = await rootFromProof(leaf, inclusion.leaf_index, inclusion.tree_size, inclusion.audit_path);
  if (root !== checkpoint.root_hash) return 'the inclusion proof does not lead to the signed root';
  return checkSignature(checkpoint);
}

const auth = () => ({ authorization: `Bearer ${keyInput.value.trim()}` });

async function verifyRow(callId, cell, button) {
  button.disabled = true;
  cell.textContent = text.verifying;
  try {
    const res = await requestJson('GET', `/api/receipts/${encodeURIComponent(callId)}`, undefined, auth());
    if (!res.ok) throw new Error(res.body?.message || text.failed);
    const data = res.body.data;
    if (!data.inclusion || !data.checkpoint) {
      cell.textContent = text.noProof;
      return;
    }
    const problem = await verify(data);
    cell.dataset.verified = problem ? 'false' : 'true';
    cell.textContent = problem
      ? fill(text.notVerified, { reason: problem })
      : fill(text.verified, { size: data.checkpoint.tree_size, kid: data.checkpoint.key_id });
  } catch (error) {
    cell.dataset.verified = 'false';
    cell.textContent = fill(text.notVerified, { reason: error instanceof Error ? error.message : String(error) });
  } finally {
    button.disabled = false;
  }
}

function render(receipts) {
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const r of receipts) {
    const button = el('button', { type: 'button', 'aria-label': `${text.verify} ${r.call_id}` }, text.verify);
    const status = el('td', { class: 'verdict' });
    // A refusal (by a policy rule or a limit) stands out; its outcome names the rule or the limit.
    const refused = r.status === 'denied' || r.status === 'rate_limited';
    const row = el(
      'tr',
      { 'data-call-id': r.call_id, 'data-status': r.status, class: refused ? 'refused' : undefined },
      el('td', {}, el('time', { datetime: r.time }, r.time.replace('T', ' ').slice(0, 19))),
      el('td', {}, el('code', {}, r.tool)),
      el('td', {}, r.provider),
      el('td', { class: 'break' }, el('code', {}, r.agin_id)),
      el('td', {}, refused ? el('strong', {}, r.status) : r.status),
      el('td', { class: 'break' }, r.outcome),
      el('td', {}, button),
    );
    const verdictRow = el('tr', { class: 'verdict-row', hidden: true }, el('td', { colspan: 7 }, status));
    status.setAttribute('role', 'status');
    button.addEventListener('click', () => {
      verdictRow.hidden = false;
      verifyRow(r.call_id, status, button);
    });
    body.append(row, verdictRow);
  }
  table.hidden = receipts.length === 0;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!keyInput.value.trim()) {
    // Said, not only marked: the search sends nothing without a key.
    fieldError(keyInput, pageData().form?.required || text.failed);
    keyInput.focus();
    return;
  }
  fieldError(keyInput, '');
  session.set('plaza_api_key', keyInput.value.trim());
  const params = new URLSearchParams();
  for (const name of ['tool', 'provider', 'agin_id', 'status']) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  const res = await requestJson('GET', `/api/receipts?${params}`, undefined, auth()).catch(() => null);
  if (!res) return say(message, text.failed, 'error');
  if (res.status === 401 || res.status === 403) return say(message, text.unauthorized, 'error');
  if (!res.ok) return say(message, res.body?.message || text.failed, 'error');
  const receipts = res.body.data.receipts;
  say(message, receipts.length === 0 ? text.none : fill(text.found, { count: receipts.length }));
  render(receipts);
});

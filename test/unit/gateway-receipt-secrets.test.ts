/**
 * A caller's third-party credential never lands in a receipt, however a provider quotes it back:
 * as sent, in another letter case, or base64-encoded. (The caller's own answer is not touched.)
 */
import { describe, expect, it } from 'vitest';

import { type CallReceipt, receiptFor, recordCall } from '../../gateway/index.ts';
import { callSecrets } from '../../gateway/internal/receipt-redaction.ts';

const SECRET = 'SuperSecretToken123';
const call = {
  callId: 'call_1',
  identity: {
    aginId: 'agin_1',
    agentPrincipal: 'agent:acc_1/agt_1',
    displayName: 'A',
    ownerContext: 'x',
    agentId: 'agt_1',
    accountId: 'acc_1',
  },
  provider: 'crm',
  tool: 'lookup',
  startedAt: 0,
  secrets: callSecrets(`Bearer ${SECRET}`),
};
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('receipt outcomes without the caller’s credential', () => {
  it.each([
    ['as sent', `token ${SECRET} is not valid here`],
    ['lower case', `token ${SECRET.toLowerCase()} is not valid here`],
    ['upper case, with its scheme', `header BEARER ${SECRET.toUpperCase()} refused`],
    ['base64', `token ${b64(SECRET)} is not valid here`],
    ['base64 without padding', `token ${b64(SECRET).replace(/=+$/, '')}!`],
    ['URL-safe base64 of the whole header', `token ${Buffer.from(`Bearer ${SECRET}`).toString('base64url')}`],
  ])('removes it %s', (_form, message) => {
    for (const outcome of [
      { error: { code: -32000, message } },
      { failure: message },
      { refused: message },
      { result: { isError: true, content: [{ type: 'text', text: message }] } },
    ]) {
      const receipt = receiptFor(call as never, outcome, 10);
      expect(receipt.outcome).toContain('[credential removed]');
      expect(receipt.outcome.toLowerCase()).not.toContain(SECRET.toLowerCase());
      expect(receipt.outcome).not.toContain(b64(SECRET).slice(0, 20));
    }
  });

  it('keeps text that only looks like regular-expression syntax', () => {
    const odd = { ...call, secrets: callSecrets('Bearer a.b*c(d)[e]|f') };
    expect(receiptFor(odd as never, { failure: 'a.b*c(d)[e]|f and aXbbc(d)[e]|f' }, 10).outcome).toBe(
      'upstream failure: [credential removed] and aXbbc(d)[e]|f',
    );
  });
});

describe('the receipt as stored', () => {
  it('holds no credential in any text, however the call came to carry it (tool, provider, a long task id cut to length)', async () => {
    const stored: CallReceipt[] = [];
    const sink = { record: async (receipt: CallReceipt) => void stored.push(receipt) };
    const odd = { ...call, tool: `lookup-${SECRET}`, provider: `crm-${SECRET.toUpperCase()}` };
    // A task id whose credential straddles the 200 characters a receipt keeps of it.
    const taskId = `${'x'.repeat(190)}${SECRET}`;
    await recordCall(sink, odd as never, { result: { task: { taskId, status: 'working' } } }, 10);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ tool: 'lookup-[credential removed]', provider: 'crm-[credential removed]' });
    expect(JSON.stringify(stored[0]).toLowerCase()).not.toContain(SECRET.slice(0, 10).toLowerCase());
  });
});

describe('receipt outcomes of MCP 2026-07-28 multi-round-trip answers', () => {
  it('says an input_required answer asks the client for inputs, not that the call succeeded with no content', () => {
    const result = {
      resultType: 'input_required',
      inputRequests: {
        ok: { method: 'elicitation/create', params: { message: 'Really?' } },
        more: { method: 'elicitation/create', params: {} },
        llm: { method: 'sampling/createMessage', params: {} },
      },
    };
    const receipt = receiptFor(call as never, { result }, 10);
    expect(receipt.status).toBe('ok');
    expect(receipt.outcome).toBe(
      'input required: the provider asks the client for 3 inputs (elicitation/create, sampling/createMessage); the client calls again with them',
    );
    expect(receiptFor(call as never, { result: { resultType: 'complete', content: [] } }, 10).outcome).toBe(
      'ok: 0 content items',
    );
  });
});

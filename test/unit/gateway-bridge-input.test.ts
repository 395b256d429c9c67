/**
 * The revision bridge's input rounds (a 2026-07-28 provider's input_required asked of a 2025 client)
 * and where a client's answer finds its waiting call: on this instance, or passed on to the one
 * holding the call (SharedCalls), never to a waiter of another agent.
 */
import { describe, expect, it } from 'vitest';

import { fulfilInput, MAX_INPUT_ROUNDS } from '../../gateway/bridge/input-rounds.ts';
import { createInputWaiters, waiterKey } from '../../gateway/bridge/input-waiters.ts';
import type { JsonRpcResponse } from '../../gateway/internal/json-rpc.ts';
import type { SharedCalls } from '../../gateway/shared-calls.ts';

const inputRequired = (inputRequests: Record<string, unknown>, requestState?: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id: 1,
  result: { resultType: 'input_required', inputRequests, ...(requestState ? { requestState } : {}) },
});
const complete: JsonRpcResponse = { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', content: [] } };
const elicit = { method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object' } } };

describe('input rounds', () => {
  it("asks each embedded request, then resends with the answers under their keys and the provider's state", async () => {
    const asked: unknown[] = [];
    const resent: unknown[] = [];
    const out = await fulfilInput(inputRequired({ a: elicit, b: { method: 'roots/list' } }, 'st-1'), {
      capabilities: { elicitation: {}, roots: {} },
      ask: async (method, params) => {
        asked.push([method, params]);
        return { jsonrpc: '2.0', id: 'x', result: method === 'roots/list' ? { roots: [] } : { action: 'accept' } };
      },
      resend: async (inputResponses, requestState) => {
        resent.push([inputResponses, requestState]);
        return complete;
      },
    });
    expect(out).toBe(complete);
    expect(asked).toEqual([
      ['elicitation/create', elicit.params],
      ['roots/list', undefined],
    ]);
    expect(resent).toEqual([[{ a: { action: 'accept' }, b: { roots: [] } }, 'st-1']]);
  });

  it.each([
    [
      'a capability the client did not declare',
      { a: elicit },
      {},
      'which the client did not declare (capability "elicitation")',
    ],
    [
      'a method Plaza does not pass on',
      { a: { method: 'tasks/get' } },
      { elicitation: {} },
      'which Plaza does not pass on',
    ],
  ])('refuses %s without asking the client', async (_, requests, capabilities, why) => {
    let asked = 0;
    const out = await fulfilInput(inputRequired(requests), {
      capabilities,
      ask: async () => void asked++,
      resend: async () => complete,
    });
    expect(out).toEqual({ refused: expect.stringContaining(why) });
    expect(asked).toBe(0);
  });

  it('refuses when the client gives no answer or an error, and stops after a bounded number of rounds', async () => {
    const silent = await fulfilInput(inputRequired({ a: elicit }), {
      capabilities: { elicitation: {} },
      ask: async () => undefined,
      resend: async () => complete,
    });
    expect(silent).toEqual({ refused: "the client did not answer the provider's elicitation/create" });
    const refused = await fulfilInput(inputRequired({ a: elicit }), {
      capabilities: { elicitation: {} },
      ask: async () => ({ jsonrpc: '2.0', id: 'x', error: { code: -1, message: 'no' } }),
      resend: async () => complete,
    });
    expect(refused).toEqual({ refused: "the client refused the provider's elicitation/create: no" });
    let rounds = 0;
    const endless = await fulfilInput(inputRequired({}, 's'), {
      capabilities: {},
      ask: async () => undefined,
      resend: async () => (rounds++, inputRequired({}, 's')),
    });
    expect(endless).toEqual({ refused: expect.stringContaining(`${MAX_INPUT_ROUNDS} times`) });
    expect(rounds).toBe(MAX_INPUT_ROUNDS);
  });
});

describe('input waiters', () => {
  it("hands a client's answer to the call waiting here, and only under its agent's key", async () => {
    const waiters = createInputWaiters(undefined);
    const key = waiterKey('weather', 'agent-a', 'plaza-input-1');
    const waiting = waiters.wait(key, 60_000, new AbortController().signal);
    waiters.answer(waiterKey('weather', 'agent-b', 'plaza-input-1'), { result: 'forged' });
    waiters.answer(key, { result: 'mine' });
    expect(await waiting).toEqual({ result: 'mine' });
  });

  it('passes an answer for a call it does not hold to the instance that does, and takes one passed to it', async () => {
    const channels = new Map<string, (payload: string) => void>();
    const bus: SharedCalls = {
      add: () => () => undefined,
      cancel: () => undefined,
      listen: (key, deliver) => {
        channels.set(key, deliver);
        return () => channels.delete(key);
      },
      deliver: (key, payload) => channels.get(key)?.(payload),
    };
    const holding = createInputWaiters(bus);
    const elsewhere = createInputWaiters(bus);
    const key = waiterKey('weather', 'agent-a', 'plaza-input-2');
    const waiting = holding.wait(key, 60_000, new AbortController().signal);
    elsewhere.answer(key, { jsonrpc: '2.0', id: 'plaza-input-2', result: { action: 'decline' } });
    expect(await waiting).toEqual({ jsonrpc: '2.0', id: 'plaza-input-2', result: { action: 'decline' } });
    expect(channels.size).toBe(0);
  });

  it('stops waiting when the call ends (its client left)', async () => {
    const waiters = createInputWaiters(undefined);
    const gone = new AbortController();
    const waiting = waiters.wait(waiterKey('p', 'a', 'x'), 60_000, gone.signal);
    gone.abort();
    expect(await waiting).toBeUndefined();
  });
});

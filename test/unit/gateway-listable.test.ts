/**
 * Pins what `/mcp`'s tools/list asks the authorize hook: each listed tool as provider and tool
 * (split at the first `__`), method `tools/list`, its published annotations; only the tools it
 * allows are listed, in their order; without a hook every tool is.
 */
import { describe, expect, it } from 'vitest';

import { listableTools } from '../../gateway/aggregate/listable.ts';
import type { AuthorizeInput } from '../../gateway/call-pipeline.ts';
import type { AgentIdentity } from '../../gateway/identity/agin-card.ts';

const identity = { agentId: 'agt_1', accountId: 'acc_1', agin_id: 'agin_1' } as unknown as AgentIdentity;
const tools = [
  { name: 'crm__read_contacts', annotations: { readOnlyHint: true } },
  { name: 'crm__delete__all', annotations: { destructiveHint: true } },
  { name: 'platform__account_auth_options' },
];

describe('listableTools', () => {
  it('lists only the tools the hook allows, asking with method tools/list and the annotations', async () => {
    const asked: Array<Omit<AuthorizeInput, 'annotations'> & { annotations: unknown }> = [];
    const listed = await listableTools(tools, identity, (input) => {
      asked.push({ ...input, annotations: input.annotations?.() });
      return input.annotations?.()?.['destructiveHint'] === true
        ? { allowed: false, code: 'denied', reason: 'no' }
        : { allowed: true };
    });
    expect(listed.map((t) => t.name)).toEqual(['crm__read_contacts', 'platform__account_auth_options']);
    expect(asked).toEqual([
      { identity, provider: 'crm', tool: 'read_contacts', method: 'tools/list', annotations: { readOnlyHint: true } },
      { identity, provider: 'crm', tool: 'delete__all', method: 'tools/list', annotations: { destructiveHint: true } },
      { identity, provider: 'platform', tool: 'account_auth_options', method: 'tools/list', annotations: undefined },
    ]);
  });

  it('lists every tool when there is no hook', async () => {
    expect(await listableTools(tools, identity, undefined)).toBe(tools);
  });
});

/**
 * The policy routes in the OpenAPI document: their schemas are the ones that validate the bodies
 * (document.ts), their answers and errors the token-API shape `/api/agents` uses.
 */
import { z } from 'zod';

import type { ComponentSpec, OperationSpec, ResponseSpec } from '../openapi/index.ts';
import { AccountPolicySchema, PolicyDocumentSchema, WindowLimitsSchema } from './document.ts';

const WindowUsageSchema = z.object({
  used: z
    .number()
    .int()
    .describe('Calls counted in the current window (counted while any limit applies to the agent).'),
  limit: z.number().int().nullable(),
  resets_at: z.iso.datetime(),
});
const UsageSchema = z.object({ minute: WindowUsageSchema, day: WindowUsageSchema });

const success = <T extends z.ZodType>(data: T) =>
  z.object({ success: z.literal(true), code: z.literal('SUCCESS'), message: z.string(), data });

const TokenErrorSchema = z.object({
  success: z.literal(false),
  code: z.string().describe('BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, RATE_LIMITED, INTERNAL_ERROR'),
  message: z.string().describe('For a malformed policy, names the rule index and field (`rule 3: rules[3].tool: …`).'),
  request_id: z.string(),
  error: z.object({ message: z.string(), type: z.string(), code: z.string(), param: z.string().nullable() }),
});

/** The policy routes' components. */
export const policyComponents: Record<string, ComponentSpec> = {
  AgentPolicyRequest: { schema: PolicyDocumentSchema, io: 'input' },
  AgentPolicyResponse: {
    schema: success(
      z.object({
        policy: PolicyDocumentSchema.nullable().describe('The agent’s own policy; null: the account default applies.'),
        effective: PolicyDocumentSchema.describe('The policy applied to its calls, `default` resolved.'),
        usage: UsageSchema.extend({ per_provider: z.record(z.string(), UsageSchema) }),
      }),
    ),
    io: 'output',
  },
  AccountAgentPolicyRequest: { schema: AccountPolicySchema, io: 'input' },
  AccountAgentPolicyResponse: {
    schema: success(
      z.object({
        default_policy: PolicyDocumentSchema.nullable(),
        limits: WindowLimitsSchema,
        usage: UsageSchema.describe('Calls of all the account’s agents against the ceiling.'),
      }),
    ),
    io: 'output',
  },
  TokenError: { schema: TokenErrorSchema, io: 'output' },
};

const error = (description: string): ResponseSpec => ({ description, component: 'TokenError' });
const errors = (write: boolean): Record<string, ResponseSpec> => ({
  ...(write ? { '400': error('Malformed policy: the message names the rule index and the field.') } : {}),
  '401': error('No valid account API key or session.'),
  '403': error('A guest token, or a session write without its CSRF header.'),
  '404': error('No such agent in this account (another account’s agent included).'),
  ...(write
    ? {
        '429': {
          ...error('Too many policy writes for the account this minute.'),
          headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' as const } } },
        },
      }
    : {}),
  '500': error('Server error: report request_id.'),
});
const security = [{ bearer: [] }];
const agentId = {
  name: 'id',
  in: 'path' as const,
  required: true,
  description: 'The agent’s id (agt_…).',
  schema: { type: 'string' },
};
const agentOp = (method: OperationSpec['method'], operationId: string, summary: string): OperationSpec => ({
  method,
  path: '/api/agents/{id}/policy',
  operationId,
  summary,
  tags: ['agents'],
  security,
  parameters: [agentId],
  ...(method === 'put' ? { requestBody: 'AgentPolicyRequest' } : {}),
  responses: {
    '200': { description: 'The agent’s policy, the policy applied, and usage.', component: 'AgentPolicyResponse' },
    ...errors(method !== 'get'),
  },
});

/** The policy routes' operations. */
export const policyOperations: OperationSpec[] = [
  agentOp('get', 'getAgentPolicy', 'An agent’s policy, the policy applied to it, and its usage against its limits'),
  agentOp('put', 'putAgentPolicy', 'Sets an agent’s policy (effective on every instance within 5 s)'),
  agentOp('delete', 'deleteAgentPolicy', 'Removes an agent’s policy: the account’s default applies'),
  ...(['get', 'put'] as const).map((method): OperationSpec => ({
    method,
    path: '/api/account/agent-policy',
    operationId: method === 'get' ? 'getAccountAgentPolicy' : 'putAccountAgentPolicy',
    summary:
      method === 'get'
        ? 'The account’s default agent policy and account-wide ceiling'
        : 'Sets the account’s default agent policy and account-wide ceiling',
    tags: ['agents'],
    security,
    ...(method === 'put' ? { requestBody: 'AccountAgentPolicyRequest' } : {}),
    responses: {
      '200': { description: 'The account’s settings and usage.', component: 'AccountAgentPolicyResponse' },
      ...errors(method === 'put'),
    },
  })),
];

/** The security scheme the policy routes name. */
export const policySecuritySchemes = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An account API key (plz_…).' },
};

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import type { AgentIdentity, CatalogTool } from '../../gateway/index.ts';
import { emailLimitKey, type SignInService } from '../accounts/index.ts';
import { isPlazaError, RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { parseOrThrow } from '../marketplace/index.ts';
import type { RateLimiter } from '../rate-limit/index.ts';
import {
  parseSourceBody,
  registrationLimitKey,
  renderSource,
  SourceBodySchema,
  type SourceService,
} from '../sources/index.ts';

/** The provider name of Plaza's own MCP tools (`/mcp/p/platform`, `platform__<tool>` on `/mcp`). */
export const PLATFORM_PROVIDER = 'platform';

/** One of Plaza's own tools: a strict zod input and a handler acting for the calling agent. */
export interface PlatformTool {
  name: string;
  description: string;
  input: z.ZodObject;
  run(identity: AgentIdentity, args: Record<string, unknown>): Promise<unknown>;
}

/** What the platform tools act on. */
export interface PlatformToolDeps {
  signIn: SignInService;
  sources: SourceService;
  /** Per-agent limit of the e-mail sending tools. */
  limiter: RateLimiter;
  /** Per-address limit of sign-in and reset e-mails (emailLimitKey), shared with the HTTP routes. */
  perEmailLimiter: RateLimiter;
  /** The source registration limit (PLAZA_RATE_LIMIT_SOURCES_PER_MIN), shared with POST /api/agpk/sources/tool. */
  sourcesLimiter: RateLimiter;
  emailDelivery: 'smtp' | 'outbox';
  allowPrivateTargets: boolean;
  log: Logger;
}

/** Plaza's own tools and a dispatcher the MCP server and the `/mcp` aggregate both use. */
export interface PlatformTools {
  list: PlatformTool[];
  /** The tools as the aggregate lists them (JSON Schema inputs). */
  catalog(): CatalogTool[];
  /** Runs a tool for `identity`; failures come back in-band (`isError`), never thrown. */
  call(identity: AgentIdentity, name: string, args: unknown): Promise<CallToolResult>;
}

const EmailArg = z.string().max(320).describe('the e-mail address');

/**
 * The account wrapper tools of spec §4.2 (`account_register_link`, `account_password_reset`,
 * `account_auth_options`; none takes a password) and `agpk.source.register` (§4.3), which registers
 * a package source as a known in-site user: the account that owns the calling agent.
 */
export function createPlatformTools(deps: PlatformToolDeps): PlatformTools {
  /** The agent's limit, then the address's: as on the HTTP routes, no inbox gets more than its share. */
  const limitAgent = async (identity: AgentIdentity, email: unknown) => {
    const decision = await deps.limiter.consume(`agent:${identity.aginId}`);
    if (!decision.allowed)
      throw new RateLimitError(
        `Too many account requests from this agent; retry after ${decision.resetSeconds} s.`,
        decision.resetSeconds,
      );
    const perAddress = await deps.perEmailLimiter.consume(emailLimitKey(email));
    if (!perAddress.allowed)
      throw new RateLimitError(
        `Too many requests for this e-mail address; retry after ${perAddress.resetSeconds} s.`,
        perAddress.resetSeconds,
      );
  };
  const list: PlatformTool[] = [
    {
      name: 'account_auth_options',
      description:
        'Which sign-in methods Plaza offers (e-mail link, password) and how its e-mail is delivered. Mirrors GET /api/auth/options.',
      input: z.strictObject({}),
      run: async () => ({ methods: { email_link: true, password: true }, email_delivery: deps.emailDelivery }),
    },
    {
      name: 'account_register_link',
      description:
        'E-mails a one-time sign-in link to an address; an unknown address gets an account when the link is used. Takes no password. Mirrors POST /api/auth/email/register-link; rate limited.',
      input: z.strictObject({
        email: EmailArg,
        name: z.string().max(200).optional().describe('display name for a new account'),
      }),
      run: async (identity, args) => {
        await limitAgent(identity, args['email']);
        await deps.signIn.requestLink({ email: args['email'], name: args['name'] as string | undefined });
        return {
          status: 'sent',
          message:
            'If the address can receive e-mail, a sign-in link is on its way. It works once and expires in 15 minutes.',
        };
      },
    },
    {
      name: 'account_password_reset',
      description:
        'Asks for a password reset e-mail for an account that has a password. Answers the same whether or not the address exists. Takes no password. Mirrors POST /api/auth/password/reset/request.',
      input: z.strictObject({ email: EmailArg }),
      run: async (identity, args) => {
        await limitAgent(identity, args['email']);
        await deps.signIn.requestPasswordReset(args['email']);
        return {
          status: 'sent',
          message: 'If an account with a password uses this address, a reset link is on its way.',
        };
      },
    },
    {
      name: 'agpk.source.register',
      description:
        'Registers an AGPK package source (metadata only: package_id, name, version, summary, vendor_name, download_uri over https, sha256 of the archive) as a known in-site user — the account that owns the calling agent. Plaza then downloads, checks and scans it; see GET /api/agpk/sources/<id>.',
      input: SourceBodySchema,
      run: async (identity, args) => {
        // Keyed as POST /api/agpk/sources/tool keys a known user's registrations: one budget per account.
        const { policy } = deps.sourcesLimiter;
        const decision = await deps.sourcesLimiter.consume(registrationLimitKey(identity.accountId!));
        if (!decision.allowed) {
          throw new RateLimitError(
            `Too many source registrations for this account: at most ${policy.limit} per ${policy.windowSeconds} s (the "${policy.name}" limit, shared with POST /api/agpk/sources/tool); retry after ${decision.resetSeconds} s.`,
            decision.resetSeconds,
          );
        }
        const body = parseSourceBody(args, deps.allowPrivateTargets);
        const { source, created } = await deps.sources.register(body, {
          trust: 'known-user',
          accountId: identity.accountId!,
        });
        return { source: renderSource(source), status: source.status, created };
      },
    },
  ];
  const byName = new Map(list.map((t) => [t.name, t]));

  return {
    list,
    catalog: () =>
      list.map((t) => ({
        provider: PLATFORM_PROVIDER,
        name: t.name,
        description: t.description,
        inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>,
        annotations: {
          platform: {
            requires_agin: true,
            caller_identity: 'Acts for the account that owns the calling agent (AGIN card).',
          },
        },
      })),
    async call(identity, name, args) {
      const tool = byName.get(name);
      if (!tool) return { content: [{ type: 'text', text: `Unknown tool ${name}.` }], isError: true };
      if (tool.name === 'agpk.source.register' && !identity.accountId) {
        return {
          content: [
            {
              type: 'text',
              text: 'This agent belongs to no account: register the source with an agent of your account, or through POST /api/agpk/sources.',
            },
          ],
          isError: true,
        };
      }
      try {
        const parsed = parseOrThrow(tool.input, args, 'arguments');
        const result = await tool.run(identity, parsed as Record<string, unknown>);
        return {
          content: [{ type: 'text', text: JSON.stringify(result) }],
          structuredContent: result as Record<string, unknown>,
        };
      } catch (error) {
        if (isPlazaError(error)) return { content: [{ type: 'text', text: error.message }], isError: true };
        deps.log.error({ err: error, tool: name }, 'platform tool failed');
        return { content: [{ type: 'text', text: 'Internal error; retry later.' }], isError: true };
      }
    },
  };
}

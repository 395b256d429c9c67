/**
 * Settings of package sources, accounts and e-mail, agents, and the gateway's OAuth authorization
 * (part of EnvSchema, in its order).
 */
import { z } from 'zod';

import { defaults } from './defaults.ts';
import { doc, flag, int, url } from './setting-types.ts';

export const SETTINGS_ACCOUNTS = {
  // Package sources, accounts and e-mail (docs/sources.md).
  SMTP_URL: url(['smtp:', 'smtps:'])
    .optional()
    .meta(
      doc(
        '`smtp://user:pass@host:587` or `smtps://…`: send system e-mail; unset keeps it in the outbox table',
        'Package sources, accounts, e-mail',
      ),
    ),
  MAIL_FROM: z
    .string()
    .trim()
    .min(3)
    .max(320)
    .default(defaults.mailFrom)
    .meta(doc('sender of system e-mail', 'Package sources, accounts, e-mail')),
  PLAZA_SOURCES_RECHECK_S: int(1, 7 * 86_400)
    .default(defaults.sourcesRecheckS)
    .meta(
      doc(
        'how often a healthy package source is downloaded and hashed again (1 s to 7 days; the source worker looks for due checks every 2 s)',
        'Package sources, accounts, e-mail',
      ),
    ),
  PLAZA_SOURCES_MAX_BYTES: int(1024, 1024 * 1024 * 1024)
    .default(defaults.sourcesMaxBytes)
    .meta(doc('largest package archive the source worker downloads', 'Package sources, accounts, e-mail')),
  PLAZA_SOURCES_DENYLIST_FILE: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta(
      doc(
        'JSON array of `{sha256, reason}`: known-bad digests added to the built-in deny-list',
        'Package sources, accounts, e-mail',
      ),
    ),
  PLAZA_RATE_LIMIT_AUTH_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitAuthPerMin)
    .meta(
      doc(
        'sign-in, link and reset requests per client per minute (and at most 5 per e-mail address)',
        'Package sources, accounts, e-mail',
      ),
    ),
  PLAZA_RATE_LIMIT_SOURCES_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitSourcesPerMin)
    .meta(
      doc(
        "source registrations per client per minute, and per account for a signed-in user's (`POST /api/agpk/sources/tool` and the `agpk.source.register` MCP tool count together)",
        'Package sources, accounts, e-mail',
      ),
    ),
  // Agents (docs/gateway.md).
  PLAZA_RATE_LIMIT_AGENTS_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitAgentsPerMin)
    .meta(
      doc(
        'agent writes (create, new token, revoke) per account per minute, and per client address for those whose credential is refused',
        'Package sources, accounts, e-mail',
      ),
    ),
  // OAuth authorization of the gateway (docs/gateway.md).
  PLAZA_OAUTH: flag
    .default(true)
    .meta(
      doc(
        'MCP authorization: Plaza is the OAuth authorization server of `/mcp` and `/mcp/p/<provider>` (metadata, client registration, consent, tokens that act as an agent) and names it in 401 challenges; `0` leaves pasted agent tokens only',
        'Gateway and receipts',
      ),
    ),
  PLAZA_OAUTH_ACCESS_TOKEN_TTL_S: int(60, 86_400)
    .default(900)
    .describe('lifetime of an OAuth access token in seconds (60 to 86400); clients renew it with their refresh token'),
  PLAZA_OAUTH_CIMD_MAX_BYTES: int(256, 1024 * 1024)
    .default(5 * 1024)
    .describe(
      "largest Client ID Metadata Document Plaza reads from a client's `client_id` URL (larger: the client is refused)",
    ),
  PLAZA_OAUTH_CIMD_TIMEOUT_MS: int(100, 30_000)
    .default(2_500)
    .describe('longest Plaza waits for a Client ID Metadata Document (connect, headers and body)'),
  PLAZA_RATE_LIMIT_OAUTH_PER_MIN: int(1, 1_000_000)
    .default(60)
    .describe(
      'OAuth client registrations and authorization requests (each of which may fetch a client metadata document) per client address per minute; the token endpoint is not counted',
    ),
};

/** Settings of the token API, the receipts and the gateway (part of EnvSchema, in its order). */
import { z } from 'zod';

import { defaults } from './defaults.ts';
import { doc, hostList, int, originList, url } from './setting-types.ts';

export const SETTINGS_SERVICES = {
  // Token API (docs/token-api.md).
  LLM_BASE_URL: url(['http:', 'https:'])
    .optional()
    .meta(doc('OpenAI-compatible upstream (including `/v1`); unset: the built-in `plaza-assistant` only', 'Token API')),
  LLM_API_KEY: z.string().trim().min(1).optional().meta(doc('key Plaza sends to that upstream', 'Token API')),
  LLM_MODELS: z.string().trim().optional().meta(doc('upstream model ids to offer, comma-separated', 'Token API')),
  LLM_MODEL_ALIASES: z.string().trim().optional().meta(doc('`name=upstream-id` pairs, comma-separated', 'Token API')),
  LLM_TIMEOUT_MS: int(100, 600_000)
    .default(defaults.llmTimeoutMs)
    .meta(
      doc(
        "wait for a stream's upstream headers, and the longest silence between chunks (or the longest a streaming client may stop reading)",
        'Token API',
      ),
    ),
  LLM_COMPLETION_TIMEOUT_MS: int(100, 3_600_000)
    .default(defaults.llmCompletionTimeoutMs)
    .meta(
      doc(
        'wait for a non-streamed upstream answer (its headers come with the whole completion), and the longest a stream may last',
        'Token API',
      ),
    ),
  LLM_MAX_RETRIES: int(0, 5)
    .default(defaults.llmMaxRetries)
    .meta(doc('retries before the first byte only', 'Token API')),
  CHAT_MAX_TOKENS: int(1, 1_000_000)
    .default(defaults.chatMaxTokens)
    .meta(doc('largest `max_tokens` accepted', 'Token API')),
  CHAT_RPM_PER_SUBJECT: int(1, 1_000_000)
    .default(defaults.chatRpmPerSubject)
    .meta(doc('chat requests per minute per bearer', 'Token API')),
  CHAT_RPM_PER_IP: int(1, 1_000_000)
    .default(defaults.chatRpmPerIp)
    .meta(doc('chat requests per minute per client address', 'Token API')),
  CHAT_TOKENS_PER_DAY_PER_SUBJECT: int(1, 1_000_000_000)
    .default(defaults.chatTokensPerDayPerSubject)
    .meta(doc('daily token budget per bearer', 'Token API')),
  CHAT_TOKENS_PER_DAY_PER_IP: int(1, 1_000_000_000)
    .default(defaults.chatTokensPerDayPerIp)
    .meta(doc('daily token budget per client address', 'Token API')),
  GUEST_TOKEN_RPM_PER_IP: int(1, 1_000_000)
    .default(defaults.guestTokenRpmPerIp)
    .meta(doc('guest tokens minted per minute per client address', 'Token API')),
  // Receipts (docs/receipts.md).
  RECEIPTS_DURABILITY: z
    .enum(['sync', 'async'])
    .default('sync')
    .meta(
      doc(
        '`sync`: a result is returned after its receipt is committed (or spooled); `async`: at once',
        'Gateway and receipts',
      ),
    ),
  PLAZA_RECEIPTS_SPOOL_DIR: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta(
      doc(
        "where receipts wait (fsync'd) while the database is down",
        'Gateway and receipts',
        '`$PLAZA_DATA_DIR/spool`',
      ),
    ),
  PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S: int(1, 86_400)
    .default(10)
    .meta(doc('how often a signed checkpoint is made when the log has grown', 'Gateway and receipts')),
  // Gateway (docs/gateway.md).
  PLAZA_GATEWAY_TIMEOUT_MS: int(1_000, 3_600_000)
    .default(300_000)
    .meta(doc('longest an upstream call or stream may take', 'Gateway and receipts')),
  PLAZA_GATEWAY_MAX_RESPONSE_BYTES: int(1024, 1024 * 1024 * 1024)
    .default(32 * 1024 * 1024)
    .meta(
      doc(
        "largest upstream answer relayed (a POST's whole answer; one event of a GET notification stream)",
        'Gateway and receipts',
      ),
    ),
  PLAZA_GATEWAY_HELD_BYTES_PER_AGENT: int(1024, 64 * 1024 * 1024 * 1024)
    .default(32 * 1024 * 1024)
    .describe(
      "most bytes of answers held in memory for one agent's clients that have not read them yet (`/mcp` and `/mcp/p/…` together); past it the agent's new calls are refused in-band and an answer that does not fit is not delivered",
    ),
  PLAZA_GATEWAY_HELD_BYTES_TOTAL: int(1024, 64 * 1024 * 1024 * 1024)
    .default(48 * 1024 * 1024)
    .describe('the same for all agents of the instance (at least the per-agent figure)'),
  PLAZA_GATEWAY_WRITE_TIMEOUT_MS: int(100, 3_600_000)
    .default(30_000)
    .describe(
      "a client that takes nothing of its answer for this long has its connection closed (the answer is not delivered; the call's receipt stands)",
    ),
  PLAZA_GATEWAY_ALLOWED_ORIGINS: originList.describe(
    "web page origins (`https://app.example.com`, comma-separated; `*` any) whose requests the gateway's MCP endpoints accept besides Plaza's own (`PUBLIC_BASE_URL`) and, when Plaza listens on loopback, loopback pages; a request without `Origin` is always accepted, any other gets 403 (DNS-rebinding protection, docs/gateway.md)",
  ),
  PLAZA_GATEWAY_ALLOWED_HOSTS: hostList.describe(
    "`Host` values (`plaza.internal:8080`, a name without port for any port; comma-separated; `*` any) the gateway's MCP endpoints accept besides `PUBLIC_BASE_URL`'s host and, when Plaza listens on loopback, loopback names; any other gets 403 (a proxy that rewrites `Host` needs its value here)",
  ),
};

import { isIP } from 'node:net';

import { z } from 'zod';

import { defaults } from './defaults.ts';

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'].includes(v), {
    message: 'expected one of 1, 0, true, false, yes, no, on, off',
  })
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const isProxyAddress = (v: string) =>
  PROXY_NAMES.includes(v) || (isIP(v.split('/')[0]!) !== 0 && (!v.includes('/') || /^\d{1,3}$/.test(v.split('/')[1]!)));

/**
 * Which proxies' X-Forwarded-For entries to believe: off; on (the one proxy in front of Plaza);
 * a number of proxy hops; or the proxies' addresses, CIDRs and names (loopback, linklocal,
 * uniquelocal). Never "every entry": the leftmost one is whatever the client sent.
 */
const trustProxy = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v, ctx): false | number | string[] => {
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    if (['1', 'true', 'yes', 'on'].includes(v)) return 1;
    if (/^\d+$/.test(v) && Number(v) <= 10) return Number(v);
    const list = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (list.length > 0 && list.every(isProxyAddress)) return list;
    ctx.addIssue({
      code: 'custom',
      message:
        'expected off, on (one proxy), a hop count up to 10, or proxy addresses/CIDRs (loopback, linklocal, uniquelocal)',
    });
    return z.NEVER;
  });

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), {
      message: `expected a URL with scheme ${protocols.map((p) => p.replace(':', '')).join(' or ')}`,
    });

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A comma-separated list read into its trimmed, lower-cased, non-empty entries, each checked by `valid`. */
const commaList = (valid: (entry: string) => boolean, expected: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx): string[] => {
      const entries = (v ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const wrong = entries.find((entry) => entry !== '*' && !valid(entry));
      if (wrong === undefined) return entries;
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(wrong)} is not ${expected}` });
      return z.NEVER;
    });
/** Origins as browsers send them: `scheme://host[:port]`, nothing after. */
const originList = commaList(
  (v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol) && new URL(v).origin === v,
  'an origin (scheme://host[:port], nothing after) or *',
);
/** Host header values: `name[:port]`. */
const hostList = commaList(
  (v) => URL.canParse(`http://${v}`) && new URL(`http://${v}`).host === v.replace(/:80$/, ''),
  'a host (name[:port]) or *',
);

/** The groups of docs/configuration.md's settings table, in the order it lists them. */
export const SETTING_GROUPS = [
  'General',
  'Marketplace',
  'Gateway and receipts',
  'Website',
  'Token API',
  'AGPK',
  'Package sources, accounts, e-mail',
] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

/**
 * A setting's documentation, kept in the schema's metadata: docs/configuration.md is generated from
 * it (`npm run docs:config`, checked by test/unit/config-docs.test.ts). `.describe('…')` alone is
 * enough for a new setting: one without a `group` is listed in the group of the setting before it,
 * and its default is read from the schema. `defaultText` (Markdown) says the default where the
 * schema has none because it is computed from other settings.
 */
function doc(
  description: string,
  group?: SettingGroup,
  defaultText?: string,
): { description: string; group?: SettingGroup; defaultText?: string } {
  return {
    description,
    ...(group === undefined ? {} : { group }),
    ...(defaultText === undefined ? {} : { defaultText }),
  };
}

/**
 * The environment variables Plaza reads, with their defaults and descriptions. docs/configuration.md
 * is generated from them; `test/unit/config.test.ts` pins the parsing.
 */
export const EnvSchema = z.object({
  PORT: int(0, 65535)
    .default(defaults.port)
    .meta(
      doc(
        'HTTP port (`0` picks a free one; then set `PUBLIC_BASE_URL`, which otherwise names port 0 in links and tokens)',
        'General',
      ),
    ),
  HOST: z.string().trim().min(1).default(defaults.host).meta(doc('interface to listen on', 'General')),
  PLAZA_DATA_DIR: z
    .string()
    .trim()
    .min(1)
    .default(defaults.dataDir)
    .meta(
      doc(
        'folder of the embedded database, and of the receipt spool (with `DATABASE_URL` only the spool: give each instance its own, see docs/scale-out.md; a second server on the same spool refuses to start)',
        'General',
      ),
    ),
  DATABASE_URL: url(['postgres:', 'postgresql:'])
    .optional()
    .meta(doc('`postgresql://…`: use PostgreSQL instead of the embedded database', 'General')),
  REDIS_URL: url(['redis:', 'rediss:'])
    .optional()
    .meta(doc('`redis://…`: share rate-limit counters and fan-out between instances', 'General')),
  REDIS_COMMAND_TIMEOUT_MS: int(50, 60_000)
    .default(defaults.redisCommandTimeoutMs)
    .meta(
      doc(
        "how long a Redis command may take (50 to 60000) before rate limits fall back to this instance's own counts (raise it for a distant Redis)",
        'General',
      ),
    ),
  PUBLIC_BASE_URL: url(['http:', 'https:'])
    .optional()
    .meta(doc('the address users reach Plaza at (token issuer, links)', 'General', '`http://localhost:$PORT`')),
  AGPK_HOME: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta(doc('local package registry, install folders, trusted keys', 'AGPK', '`$XDG_DATA_HOME/plaza/agpk`')),
  PLAZA_SHARE_URL: url(['http:', 'https:'])
    .optional()
    .meta(
      doc(
        'the package market `plaza agpk install/list-options` reads',
        'AGPK',
        '`$PUBLIC_BASE_URL`, else the URL `plaza agents login` stored, else `http://localhost:$PORT`',
      ),
    ),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default(defaults.logLevel)
    .meta(doc('`fatal` `error` `warn` `info` `debug` `trace` `silent`', 'General')),
  PLAZA_AUTO_MIGRATE: flag
    .default(defaults.autoMigrate)
    .meta(doc('apply pending migrations at start (`0`: run `plaza migrate` yourself)', 'General')),
  PLAZA_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024)
    .default(defaults.bodyLimitBytes)
    .meta(doc('largest accepted JSON request body (larger: 413; 400 on the token API)', 'General')),
  PLAZA_SHUTDOWN_TIMEOUT_MS: int(0, 600_000)
    .default(defaults.shutdownTimeoutMs)
    .meta(doc('how long SIGTERM or Ctrl-C (SIGINT) waits for in-flight requests', 'General')),
  PLAZA_TRUST_PROXY: trustProxy
    .default(false)
    .meta(
      doc(
        "behind your own proxy: `1` (one proxy in front of Plaza), a hop count, or the proxies' addresses/CIDRs (`loopback`, `10.0.0.0/8`…); client addresses are then the `X-Forwarded-For` entry those proxies appended",
        'General',
      ),
    ),
  PLAZA_RATE_LIMIT_INTENT_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitIntentPerMin)
    .meta(doc('intent requests per client per minute', 'Website')),
  PLAZA_RATE_LIMIT_LEADS_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitLeadsPerMin)
    .meta(doc('lead submissions per client per minute', 'Website')),
  PLAZA_RATE_LIMIT_KEY_PREFIX: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .default(defaults.rateLimitKeyPrefix)
    .meta(doc('prefix of Redis keys for shared counters', 'Website')),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:'])
    .optional()
    .meta(doc('turn OpenTelemetry on and send traces over OTLP/HTTP to this base URL', 'General')),
  OTEL_SERVICE_NAME: z
    .string()
    .trim()
    .min(1)
    .default(defaults.serviceName)
    .meta(doc('service name in traces, logs and `/health`', 'General')),
  PLAZA_PROBE_BASE_INTERVAL_S: int(5, 86_400)
    .default(300)
    .meta(doc('base probe interval (demand shortens it, idleness and failures lengthen it)', 'Marketplace')),
  PLAZA_ALLOW_PRIVATE_TARGETS: flag
    .default(false)
    .meta(
      doc(
        'let probes, downloads and the gateway reach loopback/private addresses — development and tests only',
        'Marketplace',
      ),
    ),
  MCP_REGISTRY_URL: z
    .union([z.literal('off'), url(['http:', 'https:'])])
    .default('https://registry.modelcontextprotocol.io')
    .meta(doc('public MCP registry to discover from; empty or `off` turns discovery off', 'Marketplace')),
  PLAZA_BACKGROUND: flag.default(true).meta(doc('run the probe, discovery and checkpoint loops', 'Marketplace')),
  PLAZA_RATE_LIMIT_LISTINGS_PER_MIN: int(1, 1_000_000)
    .default(defaults.rateLimitListingsPerMin)
    .describe(
      "listing writes (register, change, remove) per client address per minute, and per account for writes with an account's API key",
    ),
  PLAZA_PROBE_HOST_REQUESTS_PER_MIN: int(1, 1_000_000)
    .default(defaults.probeHostRequestsPerMin)
    .describe(
      'HTTP requests probes send to one host name per minute, every listing of that host together (shared through Redis when configured); probes past it wait for the next minute',
    ),
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
});

/**
 * Settings of the `plaza` commands that run on an agent's machine (`plaza agents login`, `plaza mcp
 * connect`), read by those commands, not by the server. Documented with the server's settings.
 */
export const ClientEnvSchema = z.object({
  PLAZA_CREDENTIALS_FILE: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta(
      doc(
        'where `plaza agents login` stores the agent credential `plaza mcp connect` uses',
        'AGPK',
        '`$XDG_CONFIG_HOME/plaza/agent-credentials.json`',
      ),
    ),
  PLAZA_MCP_CONNECT_DRAIN_MS: int(0, 3_600_000)
    .default(10_000)
    .meta(
      doc(
        'how long `plaza mcp connect` waits, once its client closed stdin, for answers to the requests already sent (0 to 3600000)',
      ),
    ),
  PLAZA_MCP_CONNECT_RECONNECT_MS: int(10, 600_000)
    .default(1_000)
    .meta(
      doc(
        'how soon `plaza mcp connect` first reopens a notification stream that broke off (then 1.5 times later each time, at most 10 s apart, or the setting itself when it is longer; 10 to 600000)',
      ),
    ),
  PLAZA_MCP_CONNECT_MAX_EVENT_BYTES: int(1024, 1024 * 1024 * 1024)
    .default(16 * 1024 * 1024)
    .meta(
      doc(
        'largest single event of the notification stream `plaza mcp connect` reads (larger: the stream is broken off; 1024 to 1073741824)',
      ),
    ),
});

/** Plaza's configuration, parsed once at start and passed to every factory. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** How long a Redis command may take before the caller falls back to local state (REDIS_COMMAND_TIMEOUT_MS). */
  redisCommandTimeoutMs: number;
  publicBaseUrl: string;
  /** AGPK installer: local registry folder and the market ({share_url}) it discovers packages from. */
  agpk: { home: string; shareUrl: string };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  autoMigrate: boolean;
  bodyLimitBytes: number;
  shutdownTimeoutMs: number;
  /** Express's `trust proxy`: false, a hop count, or the proxies' addresses (see PLAZA_TRUST_PROXY). */
  trustProxy: false | number | string[];
  /** Per-client limits of the public website's POST routes (fixed one-minute windows). */
  rateLimits: { intentPerMinute: number; leadsPerMinute: number; keyPrefix: string };
  telemetry: { enabled: boolean; otlpEndpoint: string | undefined; serviceName: string };
  /** MCP marketplace: probing and discovery (issue 3). */
  marketplace: {
    /** PLAZA_PROBE_BASE_INTERVAL_S: the probe scheduler's base interval. */
    probeBaseIntervalS: number;
    /** PLAZA_ALLOW_PRIVATE_TARGETS: outbound requests may reach loopback/private addresses (dev/tests only). */
    allowPrivateTargets: boolean;
    /** MCP_REGISTRY_URL: the public MCP registry pulled by discovery; undefined when off (set empty or `off`). */
    registryUrl: string | undefined;
    /**
     * PLAZA_RATE_LIMIT_LISTINGS_PER_MIN: listing writes (register, change, remove) per client
     * address per minute, and per account for writes made with an account's API key.
     */
    listingWritesPerMinute: number;
    /**
     * PLAZA_PROBE_HOST_REQUESTS_PER_MIN: HTTP requests probes send to one host name per minute,
     * all listings of that host together (shared through Redis when configured).
     */
    probeHostRequestsPerMinute: number;
  };
  /** PLAZA_BACKGROUND: run probe and discovery loops (tests turn them off and drive them directly). */
  background: boolean;
  /** OpenAI-compatible upstream of the chat endpoint; `baseUrl` unset = embedded assistant only. */
  llm: {
    baseUrl: string | undefined;
    apiKey: string | undefined;
    /** Upstream model ids offered as-is. */
    models: string[];
    /** Public name -> upstream model id. */
    aliases: Record<string, string>;
    /** LLM_TIMEOUT_MS: time to connect, to a stream's headers, and the longest silence of a stream. */
    timeoutMs: number;
    /** LLM_COMPLETION_TIMEOUT_MS: the longest wait for a non-streamed answer (its headers come with it), and the longest a stream may last. */
    completionTimeoutMs: number;
    maxRetries: number;
  };
  /** Token API limits (per bearer subject and per client IP). */
  tokenApi: {
    maxTokens: number;
    rpmPerSubject: number;
    rpmPerIp: number;
    tokensPerDayPerSubject: number;
    tokensPerDayPerIp: number;
    guestTokenRpmPerIp: number;
  };
  /** Receipts: writer durability, this instance's spool folder, checkpoint period. */
  /** The MCP gateway's limits towards upstreams. */
  gateway: {
    /** PLAZA_GATEWAY_TIMEOUT_MS: longest an upstream call (or stream) may take. */
    timeoutMs: number;
    /** PLAZA_GATEWAY_MAX_RESPONSE_BYTES: largest upstream answer relayed. */
    maxResponseBytes: number;
    /** PLAZA_GATEWAY_HELD_BYTES_PER_AGENT: most answer bytes held for one agent's clients that have not read them yet. */
    heldBytesPerAgent: number;
    /** PLAZA_GATEWAY_HELD_BYTES_TOTAL: the same for all agents of this instance. */
    heldBytesTotal: number;
    /** PLAZA_GATEWAY_WRITE_TIMEOUT_MS: longest a client may take nothing of its answer before its connection is closed. */
    writeTimeoutMs: number;
    /** PLAZA_GATEWAY_ALLOWED_ORIGINS: web origins the MCP endpoints accept besides Plaza's own (lower case; `*` any). */
    allowedOrigins: string[];
    /** PLAZA_GATEWAY_ALLOWED_HOSTS: Host values the MCP endpoints accept besides the public one (lower case; `*` any). */
    allowedHosts: string[];
  };
  /** Package source registry and its worker (docs/sources.md). */
  sources: {
    /** PLAZA_SOURCES_RECHECK_S in ms: how often a healthy source is fetched and hashed again. */
    recheckMs: number;
    /** PLAZA_SOURCES_MAX_BYTES: largest archive the worker downloads. */
    maxBytes: number;
    /** PLAZA_SOURCES_DENYLIST_FILE: extra known-bad digests (JSON array of {sha256, reason}). */
    denyListFile: string | undefined;
    /** PLAZA_RATE_LIMIT_SOURCES_PER_MIN: registrations per client per minute, and per account for a known user's (HTTP route and MCP tool together). */
    registrationsPerMinute: number;
  };
  /** System e-mail: SMTP_URL (unset: the outbox table only) and MAIL_FROM. */
  mail: { smtpUrl: string | undefined; from: string };
  /** Sign-in, link and reset requests per client (and per e-mail address) per minute. */
  auth: { requestsPerMinute: number };
  /**
   * PLAZA_RATE_LIMIT_AGENTS_PER_MIN: agent writes (create, new token, revoke) per account per
   * minute, and per client address for those whose credential is refused.
   */
  agents: { writesPerMinute: number };
  /** MCP authorization (PLAZA_OAUTH…): Plaza as the gateway's OAuth authorization server. */
  oauth: {
    enabled: boolean;
    /** PLAZA_OAUTH_ACCESS_TOKEN_TTL_S. */
    accessTokenTtlS: number;
    /** PLAZA_OAUTH_CIMD_MAX_BYTES and PLAZA_OAUTH_CIMD_TIMEOUT_MS: bounds of a client metadata document fetch. */
    cimdMaxBytes: number;
    cimdTimeoutMs: number;
    /** PLAZA_RATE_LIMIT_OAUTH_PER_MIN: registrations and authorization requests per client address per minute. */
    requestsPerMinute: number;
  };
  receipts: {
    /** RECEIPTS_DURABILITY: `sync` answers after the receipt is committed (or spooled); `async` at once. */
    durability: 'sync' | 'async';
    /** PLAZA_RECEIPTS_SPOOL_DIR (default <PLAZA_DATA_DIR>/spool): where receipts wait while the database is down. */
    spoolDir: string;
    /** PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S in ms: how often the lease holder signs a checkpoint. */
    checkpointIntervalMs: number;
  };
}

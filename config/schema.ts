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
const isProxyAddress = (v: string) => PROXY_NAMES.includes(v) || isIP(v.split('/')[0]!) !== 0 && (!v.includes('/') || /^\d{1,3}$/.test(v.split('/')[1]!));

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
    const list = v.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.length > 0 && list.every(isProxyAddress)) return list;
    ctx.addIssue({ code: 'custom', message: 'expected off, on (one proxy), a hop count up to 10, or proxy addresses/CIDRs (loopback, linklocal, uniquelocal)' });
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

/**
 * The environment variables Plaza reads, with their defaults. The README's configuration table
 * lists the same names; `test/unit/config.test.ts` pins them.
 */
export const EnvSchema = z.object({
  PORT: int(0, 65535).default(defaults.port),
  HOST: z.string().trim().min(1).default(defaults.host),
  PLAZA_DATA_DIR: z.string().trim().min(1).default(defaults.dataDir),
  DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  REDIS_COMMAND_TIMEOUT_MS: int(50, 60_000).default(defaults.redisCommandTimeoutMs),
  PUBLIC_BASE_URL: url(['http:', 'https:']).optional(),
  AGPK_HOME: z.string().trim().min(1).optional(),
  PLAZA_SHARE_URL: url(['http:', 'https:']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(defaults.logLevel),
  PLAZA_AUTO_MIGRATE: flag.default(defaults.autoMigrate),
  PLAZA_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024).default(defaults.bodyLimitBytes),
  PLAZA_SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(defaults.shutdownTimeoutMs),
  PLAZA_TRUST_PROXY: trustProxy.default(false),
  PLAZA_RATE_LIMIT_INTENT_PER_MIN: int(1, 1_000_000).default(defaults.rateLimitIntentPerMin),
  PLAZA_RATE_LIMIT_LEADS_PER_MIN: int(1, 1_000_000).default(defaults.rateLimitLeadsPerMin),
  PLAZA_RATE_LIMIT_KEY_PREFIX: z.string().trim().min(1).max(100).default(defaults.rateLimitKeyPrefix),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default(defaults.serviceName),
  PLAZA_PROBE_BASE_INTERVAL_S: int(5, 86_400).default(300),
  PLAZA_ALLOW_PRIVATE_TARGETS: flag.default(false),
  MCP_REGISTRY_URL: z.union([z.literal('off'), url(['http:', 'https:'])]).default('https://registry.modelcontextprotocol.io'),
  PLAZA_BACKGROUND: flag.default(true),
  // Token API (docs/token-api.md).
  LLM_BASE_URL: url(['http:', 'https:']).optional(),
  LLM_API_KEY: z.string().trim().min(1).optional(),
  LLM_MODELS: z.string().trim().optional(),
  LLM_MODEL_ALIASES: z.string().trim().optional(),
  LLM_TIMEOUT_MS: int(100, 600_000).default(defaults.llmTimeoutMs),
  LLM_COMPLETION_TIMEOUT_MS: int(100, 3_600_000).default(defaults.llmCompletionTimeoutMs),
  LLM_MAX_RETRIES: int(0, 5).default(defaults.llmMaxRetries),
  CHAT_MAX_TOKENS: int(1, 1_000_000).default(defaults.chatMaxTokens),
  CHAT_RPM_PER_SUBJECT: int(1, 1_000_000).default(defaults.chatRpmPerSubject),
  CHAT_RPM_PER_IP: int(1, 1_000_000).default(defaults.chatRpmPerIp),
  CHAT_TOKENS_PER_DAY_PER_SUBJECT: int(1, 1_000_000_000).default(defaults.chatTokensPerDayPerSubject),
  CHAT_TOKENS_PER_DAY_PER_IP: int(1, 1_000_000_000).default(defaults.chatTokensPerDayPerIp),
  GUEST_TOKEN_RPM_PER_IP: int(1, 1_000_000).default(defaults.guestTokenRpmPerIp),
  // Receipts (docs/receipts.md).
  RECEIPTS_DURABILITY: z.enum(['sync', 'async']).default('sync'),
  PLAZA_RECEIPTS_SPOOL_DIR: z.string().trim().min(1).optional(),
  PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S: int(1, 86_400).default(10),
  // Gateway (docs/gateway.md).
  PLAZA_GATEWAY_TIMEOUT_MS: int(1_000, 3_600_000).default(300_000),
  PLAZA_GATEWAY_MAX_RESPONSE_BYTES: int(1024, 1024 * 1024 * 1024).default(32 * 1024 * 1024),
  PLAZA_GATEWAY_HELD_BYTES_PER_AGENT: int(1024, 64 * 1024 * 1024 * 1024).default(32 * 1024 * 1024),
  PLAZA_GATEWAY_HELD_BYTES_TOTAL: int(1024, 64 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  PLAZA_GATEWAY_WRITE_TIMEOUT_MS: int(100, 3_600_000).default(30_000),
  // Package sources, accounts and e-mail (docs/sources.md).
  SMTP_URL: url(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().trim().min(3).max(320).default(defaults.mailFrom),
  PLAZA_SOURCES_RECHECK_S: int(1, 7 * 86_400).default(defaults.sourcesRecheckS),
  PLAZA_SOURCES_MAX_BYTES: int(1024, 1024 * 1024 * 1024).default(defaults.sourcesMaxBytes),
  PLAZA_SOURCES_DENYLIST_FILE: z.string().trim().min(1).optional(),
  PLAZA_RATE_LIMIT_AUTH_PER_MIN: int(1, 1_000_000).default(defaults.rateLimitAuthPerMin),
  PLAZA_RATE_LIMIT_SOURCES_PER_MIN: int(1, 1_000_000).default(defaults.rateLimitSourcesPerMin),
  // Agents (docs/gateway.md).
  PLAZA_RATE_LIMIT_AGENTS_PER_MIN: int(1, 1_000_000).default(defaults.rateLimitAgentsPerMin),
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
  };
  /** Package source registry and its worker (docs/sources.md). */
  sources: {
    /** PLAZA_SOURCES_RECHECK_S in ms: how often a healthy source is fetched and hashed again. */
    recheckMs: number;
    /** PLAZA_SOURCES_MAX_BYTES: largest archive the worker downloads. */
    maxBytes: number;
    /** PLAZA_SOURCES_DENYLIST_FILE: extra known-bad digests (JSON array of {sha256, reason}). */
    denyListFile: string | undefined;
    /** PLAZA_RATE_LIMIT_SOURCES_PER_MIN: anonymous registrations per client per minute. */
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
  receipts: {
    /** RECEIPTS_DURABILITY: `sync` answers after the receipt is committed (or spooled); `async` at once. */
    durability: 'sync' | 'async';
    /** PLAZA_RECEIPTS_SPOOL_DIR (default <PLAZA_DATA_DIR>/spool): where receipts wait while the database is down. */
    spoolDir: string;
    /** PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S in ms: how often the lease holder signs a checkpoint. */
    checkpointIntervalMs: number;
  };
}

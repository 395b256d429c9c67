import type { z } from 'zod';

import type { EnvSchema } from './schema.ts';

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
  /** PLAZA_HEAP_GROWING_PERCENT: V8's old-generation growth between full collections (0: V8 decides). */
  heapGrowingPercent: number;
  /** PLAZA_WASM_TIER: V8's WebAssembly compilers (`auto`: the baseline one only on embedded storage). */
  wasmTier: z.infer<typeof EnvSchema>['PLAZA_WASM_TIER'];
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

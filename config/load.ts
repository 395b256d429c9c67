import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { type Config, EnvSchema } from './schema.ts';

/** A configuration value is invalid; `variable` names the environment variable at fault. */
export class ConfigError extends Error {
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(`Invalid configuration: ${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/**
 * Parses Plaza's configuration from an environment map (the caller passes `process.env`; nothing
 * else in Plaza reads it). Empty strings count as unset. Throws ConfigError naming the variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const known = Object.keys(EnvSchema.shape);
  const input: Record<string, string> = {};
  for (const name of known) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[name] = value;
  }
  const parsed = EnvSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(variable, issue?.message ?? 'invalid value');
  }
  const e = parsed.data;
  if (e.PLAZA_GATEWAY_HELD_BYTES_PER_AGENT > e.PLAZA_GATEWAY_HELD_BYTES_TOTAL) {
    throw new ConfigError(
      'PLAZA_GATEWAY_HELD_BYTES_PER_AGENT',
      `must not exceed PLAZA_GATEWAY_HELD_BYTES_TOTAL (${e.PLAZA_GATEWAY_HELD_BYTES_TOTAL})`,
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.PLAZA_DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    agpk: {
      home: resolve(
        e.AGPK_HOME ??
          join(env.XDG_DATA_HOME?.trim() || join(env.HOME?.trim() || homedir(), '.local', 'share'), 'plaza', 'agpk'),
      ),
      shareUrl: (e.PLAZA_SHARE_URL ?? e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    },
    logLevel: e.LOG_LEVEL,
    autoMigrate: e.PLAZA_AUTO_MIGRATE,
    bodyLimitBytes: e.PLAZA_BODY_LIMIT_BYTES,
    shutdownTimeoutMs: e.PLAZA_SHUTDOWN_TIMEOUT_MS,
    heapGrowingPercent: e.PLAZA_HEAP_GROWING_PERCENT,
    wasmTier: e.PLAZA_WASM_TIER,
    trustProxy: e.PLAZA_TRUST_PROXY,
    rateLimits: {
      intentPerMinute: e.PLAZA_RATE_LIMIT_INTENT_PER_MIN,
      leadsPerMinute: e.PLAZA_RATE_LIMIT_LEADS_PER_MIN,
      keyPrefix: e.PLAZA_RATE_LIMIT_KEY_PREFIX,
    },
    marketplace: {
      probeBaseIntervalS: e.PLAZA_PROBE_BASE_INTERVAL_S,
      allowPrivateTargets: e.PLAZA_ALLOW_PRIVATE_TARGETS,
      // Set but empty means off (the loader otherwise treats empty as unset, i.e. the default).
      registryUrl:
        env.MCP_REGISTRY_URL !== undefined && env.MCP_REGISTRY_URL.trim() === ''
          ? undefined
          : e.MCP_REGISTRY_URL === 'off'
            ? undefined
            : e.MCP_REGISTRY_URL,
      listingWritesPerMinute: e.PLAZA_RATE_LIMIT_LISTINGS_PER_MIN,
      probeHostRequestsPerMinute: e.PLAZA_PROBE_HOST_REQUESTS_PER_MIN,
    },
    background: e.PLAZA_BACKGROUND,
    telemetry: {
      enabled: e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
      otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
    },
    llm: {
      baseUrl: e.LLM_BASE_URL?.replace(/\/+$/, ''),
      apiKey: e.LLM_API_KEY,
      models: splitList(e.LLM_MODELS),
      aliases: parseAliases(e.LLM_MODEL_ALIASES),
      timeoutMs: e.LLM_TIMEOUT_MS,
      completionTimeoutMs: e.LLM_COMPLETION_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
    },
    tokenApi: {
      maxTokens: e.CHAT_MAX_TOKENS,
      rpmPerSubject: e.CHAT_RPM_PER_SUBJECT,
      rpmPerIp: e.CHAT_RPM_PER_IP,
      tokensPerDayPerSubject: e.CHAT_TOKENS_PER_DAY_PER_SUBJECT,
      tokensPerDayPerIp: e.CHAT_TOKENS_PER_DAY_PER_IP,
      guestTokenRpmPerIp: e.GUEST_TOKEN_RPM_PER_IP,
    },
    sources: {
      recheckMs: e.PLAZA_SOURCES_RECHECK_S * 1000,
      maxBytes: e.PLAZA_SOURCES_MAX_BYTES,
      denyListFile: e.PLAZA_SOURCES_DENYLIST_FILE === undefined ? undefined : resolve(e.PLAZA_SOURCES_DENYLIST_FILE),
      registrationsPerMinute: e.PLAZA_RATE_LIMIT_SOURCES_PER_MIN,
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    auth: { requestsPerMinute: e.PLAZA_RATE_LIMIT_AUTH_PER_MIN },
    agents: { writesPerMinute: e.PLAZA_RATE_LIMIT_AGENTS_PER_MIN },
    oauth: {
      enabled: e.PLAZA_OAUTH,
      accessTokenTtlS: e.PLAZA_OAUTH_ACCESS_TOKEN_TTL_S,
      cimdMaxBytes: e.PLAZA_OAUTH_CIMD_MAX_BYTES,
      cimdTimeoutMs: e.PLAZA_OAUTH_CIMD_TIMEOUT_MS,
      requestsPerMinute: e.PLAZA_RATE_LIMIT_OAUTH_PER_MIN,
    },
    gateway: {
      timeoutMs: e.PLAZA_GATEWAY_TIMEOUT_MS,
      maxResponseBytes: e.PLAZA_GATEWAY_MAX_RESPONSE_BYTES,
      heldBytesPerAgent: e.PLAZA_GATEWAY_HELD_BYTES_PER_AGENT,
      heldBytesTotal: e.PLAZA_GATEWAY_HELD_BYTES_TOTAL,
      writeTimeoutMs: e.PLAZA_GATEWAY_WRITE_TIMEOUT_MS,
      allowedOrigins: e.PLAZA_GATEWAY_ALLOWED_ORIGINS,
      allowedHosts: e.PLAZA_GATEWAY_ALLOWED_HOSTS,
    },
    receipts: {
      durability: e.RECEIPTS_DURABILITY,
      spoolDir: resolve(e.PLAZA_RECEIPTS_SPOOL_DIR ?? join(e.PLAZA_DATA_DIR, 'spool')),
      checkpointIntervalMs: e.PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S * 1000,
    },
  };
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `LLM_MODEL_ALIASES=name=upstream-id,other=id2`. */
function parseAliases(value: string | undefined): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (const pair of splitList(value)) {
    const [name, target, ...rest] = pair.split('=').map((part) => part.trim());
    if (!name || !target || rest.length > 0)
      throw new ConfigError(
        'LLM_MODEL_ALIASES',
        `expected name=model pairs separated by commas, got ${JSON.stringify(pair)}`,
      );
    aliases[name] = target;
  }
  return aliases;
}

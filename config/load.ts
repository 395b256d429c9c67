import { resolve } from 'node:path';

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
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.PLAZA_DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    autoMigrate: e.PLAZA_AUTO_MIGRATE,
    bodyLimitBytes: e.PLAZA_BODY_LIMIT_BYTES,
    shutdownTimeoutMs: e.PLAZA_SHUTDOWN_TIMEOUT_MS,
    trustProxy: e.PLAZA_TRUST_PROXY,
    telemetry: {
      enabled: e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
      otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
    },
  };
}

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
  PUBLIC_BASE_URL: url(['http:', 'https:']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(defaults.logLevel),
  PLAZA_AUTO_MIGRATE: flag.default(defaults.autoMigrate),
  PLAZA_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024).default(defaults.bodyLimitBytes),
  PLAZA_SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(defaults.shutdownTimeoutMs),
  PLAZA_TRUST_PROXY: flag.default(false),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default(defaults.serviceName),
});

/** Plaza's configuration, parsed once at start and passed to every factory. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  publicBaseUrl: string;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  autoMigrate: boolean;
  bodyLimitBytes: number;
  shutdownTimeoutMs: number;
  trustProxy: boolean;
  telemetry: { enabled: boolean; otlpEndpoint: string | undefined; serviceName: string };
}

/**
 * Settings of the server itself: where it listens and stores, its HTTP edge, the marketplace's
 * probes and discovery, and AGPK (part of EnvSchema, in its order: docs/configuration.md lists them so).
 */
import { z } from 'zod';

import { defaults } from './defaults.ts';
import { doc, flag, int, trustProxy, url } from './setting-types.ts';

export const SETTINGS_SERVER = {
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
  PLAZA_HEAP_GROWING_PERCENT: int(0, 300)
    .default(defaults.heapGrowingPercent)
    .meta(
      doc(
        "how far V8's old generation may grow past what the last full collection kept before the next one starts, in percent (`0`: V8's own choice, up to 300%); `plaza serve` sets it at start unless node's command line has `--heap-growing-percent`",
        'General',
      ),
    ),
  PLAZA_WASM_TIER: z
    .enum(['auto', 'baseline', 'optimizing'])
    .default(defaults.wasmTier)
    .meta(
      doc(
        "which of V8's WebAssembly compilers runs the embedded database and other WebAssembly: `baseline` only (less memory: no ~600 MB spike while V8 optimises PGlite, ~5–10% more CPU per gateway call), `optimizing` (V8's default), or `auto`: `baseline` on embedded storage, `optimizing` with `DATABASE_URL`; `plaza serve` sets it at start unless node's command line names `--liftoff-only`, `--liftoff`, `--wasm-tier-up` or `--wasm-dynamic-tiering`",
        'General',
      ),
    ),
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
};

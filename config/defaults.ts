/** Plaza's defaults: what runs when nothing is configured (embedded storage, port 8080). */
export const defaults = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './.plaza',
  logLevel: 'info',
  serviceName: 'plaza',
  bodyLimitBytes: 1024 * 1024,
  shutdownTimeoutMs: 10_000,
  // The old generation grows 60% past what a full collection kept (V8 alone lets it grow up to 4×).
  heapGrowingPercent: 60,
  // V8's baseline WebAssembly compiler only on embedded storage (src/app/wasm-policy.ts).
  wasmTier: 'auto' as const,
  autoMigrate: true,
  llmTimeoutMs: 30_000,
  // The openai SDK's own default timeout: a client waits this long for a non-streamed answer.
  llmCompletionTimeoutMs: 600_000,
  llmMaxRetries: 1,
  chatMaxTokens: 4096,
  chatRpmPerSubject: 30,
  chatRpmPerIp: 120,
  chatTokensPerDayPerSubject: 200_000,
  chatTokensPerDayPerIp: 1_000_000,
  guestTokenRpmPerIp: 10,
  rateLimitIntentPerMin: 30,
  rateLimitLeadsPerMin: 10,
  rateLimitKeyPrefix: 'plaza:rl:',
  mailFrom: 'Plaza <no-reply@localhost>',
  sourcesRecheckS: 3600,
  sourcesMaxBytes: 64 * 1024 * 1024,
  rateLimitAuthPerMin: 10,
  rateLimitSourcesPerMin: 20,
  rateLimitAgentsPerMin: 30,
  rateLimitListingsPerMin: 10,
  // A probe is ~4 requests (initialize, initialized, tools/list, DELETE): ~15 probes a minute per host.
  probeHostRequestsPerMin: 60,
  redisCommandTimeoutMs: 500,
} as const;

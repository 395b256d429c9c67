/** Plaza's defaults: what runs when nothing is configured (embedded storage, port 8080). */
export const defaults = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './.plaza',
  logLevel: 'info',
  serviceName: 'plaza',
  bodyLimitBytes: 1024 * 1024,
  shutdownTimeoutMs: 10_000,
  autoMigrate: true,
} as const;

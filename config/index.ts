/** Configuration: the env schema, its defaults, and the one loader. */
export { defaults } from './defaults.ts';
export { ConfigError, loadConfig } from './load.ts';
export type { Config } from './schema.ts';
export { EnvSchema } from './schema.ts';

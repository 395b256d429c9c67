/** Configuration: the env schema, its defaults, and the one loader. */
export { defaults } from './defaults.ts';
export { ConfigError, loadConfig } from './load.ts';
export type { Config, SettingGroup } from './schema.ts';
export { ClientEnvSchema, EnvSchema, SETTING_GROUPS } from './schema.ts';

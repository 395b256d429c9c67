import { z } from 'zod';

import { doc, int } from './setting-types.ts';
import { SETTINGS_ACCOUNTS } from './settings-accounts.ts';
import { SETTINGS_SERVER } from './settings-server.ts';
import { SETTINGS_SERVICES } from './settings-services.ts';

export type { Config } from './config.ts';
export { SETTING_GROUPS, type SettingGroup } from './setting-types.ts';

/**
 * The environment variables Plaza reads, with their defaults and descriptions. docs/configuration.md
 * is generated from them; `test/unit/config.test.ts` pins the parsing.
 */
export const EnvSchema = z.object({ ...SETTINGS_SERVER, ...SETTINGS_SERVICES, ...SETTINGS_ACCOUNTS });

/**
 * Settings of the `plaza` commands that run on an agent's machine (`plaza agents login`, `plaza mcp
 * connect`), read by those commands, not by the server. Documented with the server's settings.
 */
export const ClientEnvSchema = z.object({
  PLAZA_CREDENTIALS_FILE: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta(
      doc(
        'where `plaza agents login` stores the agent credential `plaza mcp connect` uses',
        'AGPK',
        '`$XDG_CONFIG_HOME/plaza/agent-credentials.json`',
      ),
    ),
  PLAZA_MCP_CONNECT_DRAIN_MS: int(0, 3_600_000)
    .default(10_000)
    .meta(
      doc(
        'how long `plaza mcp connect` waits, once its client closed stdin, for answers to the requests already sent (0 to 3600000)',
      ),
    ),
  PLAZA_MCP_CONNECT_RECONNECT_MS: int(10, 600_000)
    .default(1_000)
    .meta(
      doc(
        'how soon `plaza mcp connect` first reopens a notification stream that broke off (then 1.5 times later each time, at most 10 s apart, or the setting itself when it is longer; 10 to 600000)',
      ),
    ),
  PLAZA_MCP_CONNECT_MAX_EVENT_BYTES: int(1024, 1024 * 1024 * 1024)
    .default(16 * 1024 * 1024)
    .meta(
      doc(
        'largest single event of the notification stream `plaza mcp connect` reads (larger: the stream is broken off; 1024 to 1073741824)',
      ),
    ),
});

/**
 * Generates docs/configuration.md from the config schema (config/schema.ts): one table row per
 * environment variable, in the groups of SETTING_GROUPS, with the description and group kept in
 * each setting's zod metadata. `npm run docs:config` writes the file; test/unit/config-docs.test.ts
 * fails when the committed file differs from what this renders.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { z } from 'zod';

import { ClientEnvSchema, EnvSchema, SETTING_GROUPS } from '../config/index.ts';

export const CONFIGURATION_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** One row of the settings table. */
export interface SettingRow {
  name: string;
  group: string;
  /** Markdown: the schema's default in backticks, the `defaultText` override, or `–` for none. */
  defaultText: string;
  description: string;
}

/** The settings whose schema entry carries no description; each needs `.describe('…')` beside it. */
export class MissingDescriptionError extends Error {
  readonly names: string[];

  constructor(names: string[]) {
    super(
      `${names.join(', ')} ${names.length === 1 ? 'has' : 'have'} no description: add .describe('what it does') to ` +
        `${names.length === 1 ? 'it' : 'each'} in config/schema.ts, then run npm run docs:config`,
    );
    this.name = 'MissingDescriptionError';
    this.names = names;
  }
}

/**
 * The rows of every variable of the given schemas, in schema order. A setting without a `group`
 * joins the group of the setting before it (the first one without: the first group), so a new
 * setting written beside its kin needs only `.describe()`. Throws MissingDescriptionError naming
 * every setting that has no description.
 */
export function settingRows(schemas: Array<z.ZodObject> = [EnvSchema, ClientEnvSchema]): SettingRow[] {
  const rows: SettingRow[] = [];
  const missing: string[] = [];
  let group: string = SETTING_GROUPS[0];
  for (const schema of schemas) {
    for (const [name, setting] of Object.entries(schema.shape) as Array<[string, z.ZodType]>) {
      const meta = settingMeta(setting);
      const description = typeof meta.description === 'string' ? meta.description.trim() : '';
      if (description === '') missing.push(name);
      if (typeof meta['group'] === 'string') group = meta['group'];
      const override = meta['defaultText'];
      rows.push({
        name,
        group,
        defaultText: typeof override === 'string' ? override : schemaDefault(setting),
        description,
      });
    }
  }
  if (missing.length > 0) throw new MissingDescriptionError(missing);
  return rows;
}

/** A setting's metadata: its own, or that of the schema it wraps (`.describe()` before `.default()`). */
function settingMeta(setting: z.ZodType): Record<string, unknown> {
  for (let schema: z.ZodType | undefined = setting; schema !== undefined;) {
    const meta = schema.meta();
    if (meta !== undefined) return meta;
    schema = (schema._zod.def as { innerType?: z.ZodType }).innerType;
  }
  return {};
}

/** The default a schema entry applies when the variable is unset, as the table shows it. */
function schemaDefault(setting: z.ZodType): string {
  const def = setting._zod.def as { type: string; defaultValue?: unknown };
  if (def.type !== 'default') return '–';
  const value = def.defaultValue;
  // Flags (and PLAZA_TRUST_PROXY's off) are written as the environment spells them.
  const text = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  return `\`${text}\``;
}

/** docs/configuration.md as the schema says it. */
export function renderConfigurationDoc(rows: SettingRow[] = settingRows()): string {
  const groups = [...SETTING_GROUPS, ...new Set(rows.map((row) => row.group))].filter(
    (g, i, all) => all.indexOf(g) === i,
  );
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from config/schema.ts by `npm run docs:config`: edit the descriptions there, not here. -->',
    '',
    'Plaza reads its settings once at start from the environment; a bad value stops it with a message',
    'naming the variable and exit code 2. An empty value counts as unset. The `AGPK` group ends with',
    "settings of the `plaza` commands that run on an agent's machine (`plaza agents login`,",
    '`plaza mcp connect`), which those commands read.',
    '',
    "Not Plaza's own settings, but read from the same environment: `npm start` runs Node with",
    "`--max-semi-space-size=16` and sets glibc's `MALLOC_ARENA_MAX=2` and `MALLOC_TRIM_THRESHOLD_=0`",
    '(values already set win; `LOG_LEVEL=debug` shows them as `allocator`). Started another way (a',
    'process manager, a container), set `NODE_OPTIONS=--max-semi-space-size=16` and the two others',
    'yourself (README, "PostgreSQL and Redis").',
    '',
    '| Variable | Default | Meaning |',
    '|---|---|---|',
  ];
  for (const group of groups) {
    const inGroup = rows.filter((row) => row.group === group);
    if (inGroup.length === 0) continue;
    lines.push(`| **${cell(group)}** | | |`);
    for (const row of inGroup) lines.push(`| \`${row.name}\` | ${cell(row.defaultText)} | ${cell(row.description)} |`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    writeFileSync(CONFIGURATION_DOC, renderConfigurationDoc());
    process.stdout.write(`wrote ${CONFIGURATION_DOC}\n`);
  } catch (error) {
    if (!(error instanceof MissingDescriptionError)) throw error;
    process.stderr.write(`docs:config: ${error.message}\n`);
    process.exitCode = 1;
  }
}

/**
 * docs/configuration.md is generated from config/schema.ts (`npm run docs:config`): these tests fail
 * when a setting has no description, or when the committed file differs from what the schema says.
 */
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { ClientEnvSchema, EnvSchema } from '../../config/index.ts';
import {
  CONFIGURATION_DOC,
  MissingDescriptionError,
  renderConfigurationDoc,
  settingRows,
} from '../../scripts/config-docs.ts';

describe('docs/configuration.md', () => {
  it('has a description for every setting in config/schema.ts', () => {
    let missing: string[] = [];
    try {
      settingRows();
    } catch (error) {
      if (!(error instanceof MissingDescriptionError)) throw error;
      missing = error.names;
    }
    expect(
      missing,
      `${missing.join(', ')}: add .describe('what it does') beside it in config/schema.ts, then run npm run docs:config`,
    ).toEqual([]);
  });

  it('is what npm run docs:config writes from config/schema.ts', () => {
    const committed = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(
      committed,
      'docs/configuration.md differs from config/schema.ts: run npm run docs:config and commit the file',
    ).toBe(renderConfigurationDoc());
  });

  it('lists every variable the server and the plaza client commands read, once', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    for (const name of [...Object.keys(EnvSchema.shape), ...Object.keys(ClientEnvSchema.shape)]) {
      expect(
        doc.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`)),
        name,
      ).toHaveLength(1);
    }
  });
});

describe('settingRows', () => {
  it('puts a setting with only .describe() in the group of the setting before it, with the schema default', () => {
    const schema = z.object({
      A: z.string().default('x').meta({ description: 'first', group: 'Website' }),
      B: z.coerce.number().int().default(7).describe('second, added later'),
      C: z.string().optional().describe('third'),
    });
    expect(settingRows([schema])).toEqual([
      { name: 'A', group: 'Website', defaultText: '`x`', description: 'first' },
      { name: 'B', group: 'Website', defaultText: '`7`', description: 'second, added later' },
      { name: 'C', group: 'Website', defaultText: '–', description: 'third' },
    ]);
  });

  it('names every setting without a description and says what to do', () => {
    const schema = z.object({
      A: z.string().describe('ok'),
      NEW_ONE: z.string().optional(),
      NEW_TWO: z.string().default('y'),
    });
    expect(() => settingRows([schema])).toThrow(
      "NEW_ONE, NEW_TWO have no description: add .describe('what it does') to each in config/schema.ts, then run npm run docs:config",
    );
  });

  it('reads a description written before .default(), and a default text given for a computed default', () => {
    const schema = z.object({
      A: z.string().describe('inner').default('v'),
      B: z.string().optional().meta({ description: 'computed', group: 'AGPK', defaultText: '`$HOME/x`' }),
    });
    expect(settingRows([schema]).map((row) => [row.description, row.defaultText, row.group])).toEqual([
      ['inner', '`v`', 'General'],
      ['computed', '`$HOME/x`', 'AGPK'],
    ]);
  });
});

/**
 * The building blocks of Plaza's settings schema: value types (flags, URLs, bounded integers,
 * comma-separated lists, the proxy setting), the groups docs/configuration.md lists settings in,
 * and `doc`, the metadata each setting carries. The settings themselves are in settings-*.ts.
 */
import { isIP } from 'node:net';

import { z } from 'zod';

export const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'].includes(v), {
    message: 'expected one of 1, 0, true, false, yes, no, on, off',
  })
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const isProxyAddress = (v: string) =>
  PROXY_NAMES.includes(v) || (isIP(v.split('/')[0]!) !== 0 && (!v.includes('/') || /^\d{1,3}$/.test(v.split('/')[1]!)));

/**
 * Which proxies' X-Forwarded-For entries to believe: off; on (the one proxy in front of Plaza);
 * a number of proxy hops; or the proxies' addresses, CIDRs and names (loopback, linklocal,
 * uniquelocal). Never "every entry": the leftmost one is whatever the client sent.
 */
export const trustProxy = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v, ctx): false | number | string[] => {
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    if (['1', 'true', 'yes', 'on'].includes(v)) return 1;
    if (/^\d+$/.test(v) && Number(v) <= 10) return Number(v);
    const list = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (list.length > 0 && list.every(isProxyAddress)) return list;
    ctx.addIssue({
      code: 'custom',
      message:
        'expected off, on (one proxy), a hop count up to 10, or proxy addresses/CIDRs (loopback, linklocal, uniquelocal)',
    });
    return z.NEVER;
  });

export const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), {
      message: `expected a URL with scheme ${protocols.map((p) => p.replace(':', '')).join(' or ')}`,
    });

export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A comma-separated list read into its trimmed, lower-cased, non-empty entries, each checked by `valid`. */
const commaList = (valid: (entry: string) => boolean, expected: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx): string[] => {
      const entries = (v ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const wrong = entries.find((entry) => entry !== '*' && !valid(entry));
      if (wrong === undefined) return entries;
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(wrong)} is not ${expected}` });
      return z.NEVER;
    });
/** Origins as browsers send them: `scheme://host[:port]`, nothing after. */
export const originList = commaList(
  (v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol) && new URL(v).origin === v,
  'an origin (scheme://host[:port], nothing after) or *',
);
/** Host header values: `name[:port]`. */
export const hostList = commaList(
  (v) => URL.canParse(`http://${v}`) && new URL(`http://${v}`).host === v.replace(/:80$/, ''),
  'a host (name[:port]) or *',
);

/** The groups of docs/configuration.md's settings table, in the order it lists them. */
export const SETTING_GROUPS = [
  'General',
  'Marketplace',
  'Gateway and receipts',
  'Website',
  'Token API',
  'AGPK',
  'Package sources, accounts, e-mail',
] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

/**
 * A setting's documentation, kept in the schema's metadata: docs/configuration.md is generated from
 * it (`npm run docs:config`, checked by test/unit/config-docs.test.ts). `.describe('…')` alone is
 * enough for a new setting: one without a `group` is listed in the group of the setting before it,
 * and its default is read from the schema. `defaultText` (Markdown) says the default where the
 * schema has none because it is computed from other settings.
 */
export function doc(
  description: string,
  group?: SettingGroup,
  defaultText?: string,
): { description: string; group?: SettingGroup; defaultText?: string } {
  return {
    description,
    ...(group === undefined ? {} : { group }),
    ...(defaultText === undefined ? {} : { defaultText }),
  };
}

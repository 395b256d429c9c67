import { z } from 'zod';

import { assertUrlLiterallyAllowed, SsrfError } from '../../probes/index.ts';
import { ValidationError } from '../kernel/index.ts';
import { parseOrThrow } from '../marketplace/index.ts';

// Tabs and newlines are fine in a summary; other C0 controls and DEL are not.
const noControl = (v: string) =>
  ![...v].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== '\t' && c !== '\n' && c !== '\r') || code === 0x7f;
  });
const text = (min: number, max: number) =>
  z
    .string()
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `at least ${min} characters`)
    .max(max, `at most ${max} characters`)
    .refine(noControl, 'must not contain control characters')
    // A lone surrogate would be stored as U+FFFD: a changed name is refused rather than kept.
    .refine((v) => v.isWellFormed(), 'must be well-formed Unicode (a lone surrogate is not)');

/** The registration body (spec §2.10). Unknown fields are refused. */
export const SourceBodySchema = z.strictObject({
  package_id: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/,
      'must be 1–128 characters of letters, digits and . _ + -, starting with a letter or digit',
    ),
  name: text(1, 200),
  version: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._+~-]{0,63}$/, 'must be 1–64 characters of letters, digits and . _ + ~ -'),
  summary: text(0, 2_000).default(''),
  vendor_name: text(1, 200),
  download_uri: z
    .string()
    .max(2_048, 'at most 2048 characters')
    .refine((v) => URL.canParse(v) && new URL(v).protocol === 'https:', 'must be an https URL')
    .refine(
      (v) => !URL.canParse(v) || (new URL(v).username === '' && new URL(v).password === ''),
      'must not carry user:password@',
    ),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be exactly 64 hexadecimal characters')
    .transform((v) => v.toLowerCase()),
});

/** A parsed registration. */
export type SourceBody = z.infer<typeof SourceBodySchema>;

/**
 * Parses a registration body: the schema, then the SSRF check that needs no DNS (IP literals,
 * `localhost`), so an obviously internal URI is refused at once instead of by the worker.
 */
export function parseSourceBody(value: unknown, allowPrivateTargets: boolean): SourceBody {
  const body = parseOrThrow(SourceBodySchema, value, 'package source');
  try {
    assertUrlLiterallyAllowed(new URL(body.download_uri), allowPrivateTargets);
  } catch (error) {
    if (error instanceof SsrfError)
      throw new ValidationError(`Invalid package source: download_uri: ${error.message}`, {
        param: 'download_uri',
        cause: error,
      });
    throw error;
  }
  return body;
}

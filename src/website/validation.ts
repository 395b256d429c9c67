import type { z } from 'zod';

import { ValidationError } from '../kernel/index.ts';

/**
 * Parses a request body with a strict schema; on failure throws a ValidationError with the route's
 * §7 code, a readable message and the field-level issues as `details`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, code: 'invalid_prompt' | 'invalid_lead'): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.slice(0, 10).map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.code === 'unrecognized_keys' ? `Unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  const what = code === 'invalid_prompt' ? 'Invalid intent request' : 'Invalid lead';
  throw new ValidationError(`${what}: ${summary}`, { code, details, param: details[0]?.path || null });
}

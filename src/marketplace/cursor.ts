import { ValidationError } from '../kernel/index.ts';

/** Encodes a cursor: opaque base64url JSON, so callers cannot depend on its shape. */
export function encodeCursor(value: unknown[]): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor with `arity` string/number parts; 400 when it is not one. */
export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === arity &&
      value.every((v) => (typeof v === 'string' && !v.includes('\u0000')) || Number.isSafeInteger(v))
    ) {
      return value as (string | number)[];
    }
  } catch {
    // fall through
  }
  throw new ValidationError('Invalid cursor: pass the next_cursor of a previous page unchanged.', { param: 'cursor' });
}

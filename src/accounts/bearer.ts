import { AuthError } from '../kernel/index.ts';

/**
 * Extracts the token of an `Authorization: Bearer <token>` header, framework-free.
 * Throws AuthError when the header is missing or not a Bearer credential.
 */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '')
    throw new AuthError('Missing Authorization: Bearer <token> header.');
  const match = /^Bearer[ \t]+([!-~]+)[ \t]*$/i.exec(header);
  if (!match?.[1]) throw new AuthError('Authorization header must be "Bearer <token>".');
  return match[1];
}

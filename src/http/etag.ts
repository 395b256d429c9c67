import { createHash } from 'node:crypto';

const REQUEST_ID_FIELD = '"request_id":"';

/**
 * Express's ETag function: a strong ETag (the format Express's own has: length and sha1) for an
 * answer whose bytes can repeat, and none for a JSON body that carries its `request_id`: that
 * differs on every answer, so an ETag of it could never match a later If-None-Match, and costs a
 * hash for nothing. Routes whose content is worth revalidating set their own ETag (the catalog).
 */
export function answerEtag(body: string | Buffer, encoding?: BufferEncoding): string | undefined {
  const bytes = typeof body === 'string' ? Buffer.from(body, encoding) : body;
  if (bytes.includes(REQUEST_ID_FIELD)) return undefined;
  return `"${bytes.length.toString(16)}-${createHash('sha1').update(bytes).digest('base64').slice(0, 27)}"`;
}

import { createHash } from 'node:crypto';

import { Router } from 'express';

import type { OpenApiDocument } from './document.ts';

/**
 * `GET /openapi.json`: the document, built once, with a content ETag so clients revalidate cheaply.
 * Sent with `res.send` so the JSON wrapper does not stamp a `request_id` into the contract.
 */
export function openApiRoutes(deps: { document: OpenApiDocument }): Router {
  const body = JSON.stringify(deps.document);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(body);
  });
  return router;
}

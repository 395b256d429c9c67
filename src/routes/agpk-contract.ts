import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

import { Router } from 'express';

import { NotFoundError } from '../kernel/index.ts';

interface ContractFile {
  body: Buffer;
  type: string;
  etag: string;
}

function contentType(name: string): string {
  if (name === 'schema.json' || name.endsWith('.schema.json')) return 'application/schema+json; charset=utf-8';
  if (extname(name) === '.json') return 'application/json; charset=utf-8';
  if (extname(name) === '.md') return 'text/markdown; charset=utf-8';
  return 'text/plain; charset=utf-8';
}

/**
 * `GET /agpk/v1/<file>` (spec §4.5): the AGPK v1 contract files (manifest and command schemas,
 * catalog schema, builder standard, SDK, first-party catalog) from `dir`, read once at creation,
 * with strong ETags (If-None-Match answers 304) and a short public cache.
 */
export function agpkContractRoutes(deps: { dir: string }): Router {
  const files = new Map<string, ContractFile>();
  for (const name of readdirSync(deps.dir)) {
    if (!/^[a-z0-9.-]+\.(json|md)$/.test(name)) continue;
    const body = readFileSync(join(deps.dir, name));
    files.set(name, {
      body,
      type: contentType(name),
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`,
    });
  }
  if (!files.has('schema.json')) throw new Error(`AGPK contract folder ${deps.dir} has no schema.json`);

  const router = Router();
  router.get('/agpk/v1/:file', (req, res) => {
    const file = files.get(req.params.file);
    if (!file)
      throw new NotFoundError(
        `No AGPK contract file ${req.params.file}; see /agpk/v1/ for ${[...files.keys()].join(', ')}`,
      );
    res.setHeader('ETag', file.etag);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Content-Type', file.type);
    const match = req.headers['if-none-match'];
    if (match !== undefined && match.split(',').some((t) => t.trim() === file.etag || t.trim() === '*')) {
      res.status(304).end();
      return;
    }
    res.status(200).send(file.body);
  });
  router.get(['/agpk/v1', '/agpk/v1/'], (_req, res) => {
    res.json({
      agpk_version: '1.0',
      files: [...files.keys()]
        .sort()
        .map((name) => ({ name, href: `/agpk/v1/${name}`, content_type: files.get(name)!.type })),
    });
  });
  return router;
}

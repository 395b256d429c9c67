import { Router } from 'express';

import type { SigningKeyStore } from '../keys/index.ts';

/**
 * `GET /.well-known/jwks.json`: every published Ed25519 public key (active and retained retired
 * ones, all purposes), for verifiers of guest tokens, call assertions and checkpoints.
 */
export function jwksRoutes(deps: { keys: SigningKeyStore }): Router {
  const router = Router();
  router.get('/.well-known/jwks.json', async (_req, res) => {
    const jwks = await deps.keys.jwks();
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/jwk-set+json').json(jwks);
  });
  return router;
}

import { Router } from 'express';
import { apiHeaders, routeName } from '@vanish/common';
import { RELEASE_MANIFEST_PATH } from './release-manifest';

/**
 * GET /.well-known/vanish-release.json (DECISIONS 17): the release manifest's bytes exactly as the build wrote
 * them (their SHA-256 is the digest receipts record). Public, the same for everyone; the gateway passes it on.
 */
export function createReleaseRoutes(manifestText: string): Router {
  const router = Router();
  router.get(RELEASE_MANIFEST_PATH, routeName(RELEASE_MANIFEST_PATH), (req, res) => {
    apiHeaders(req, res, () => undefined);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.status(200).type('application/json').send(Buffer.from(manifestText, 'utf8'));
  });
  return router;
}

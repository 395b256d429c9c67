/** Pins GET /health reporting the real state: 503 with a non-ok status when the database is gone. */
import { describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza } from '../support/plaza.ts';

describe.each(BACKENDS)('GET /health on %s', (backend) => {
  it('answers 503 unavailable once the database is unreachable', async () => {
    const plaza = await startTestPlaza(backend);
    try {
      expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
      await plaza.db.close();
      await new Promise((r) => setTimeout(r, 1_100));
      const res = await fetch(`${plaza.url}/health`);
      expect(res.status).toBe(503);
      const body: any = await res.json();
      expect(body).toMatchObject({
        status: 'unavailable',
        service: 'plaza',
        shared_envelope: { success: false, code: 'UNAVAILABLE', data: { status: 'unavailable', service: 'plaza' } },
      });
      expect(typeof body.request_id).toBe('string');
    } finally {
      await plaza.close();
    }
  });
});

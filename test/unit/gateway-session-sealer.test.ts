/**
 * Plaza session ids (gateway/session-sealer.ts): sealed claims open only under the same key, a
 * damaged or foreign id never opens, and the cache of opened ids neither lets forgeries in nor
 * hands out claims a caller could change.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { createSessionSealer } from '../../gateway/index.ts';

const claims = { provider: 'crm', agentId: 'agt_1', upstreamSessionId: 'up-session-1' };

describe('createSessionSealer', () => {
  it('opens what it sealed, and the same id again from its cache', () => {
    const sealer = createSessionSealer(randomBytes(32));
    const id = sealer.seal(claims);
    expect(id).toMatch(/^pss1\./);
    expect(sealer.open(id)).toEqual(claims);
    expect(sealer.open(id)).toEqual(claims);
  });

  it('hands out copies: changing an opened claim does not change the next open', () => {
    const sealer = createSessionSealer(randomBytes(32));
    const id = sealer.seal(claims);
    const first = sealer.open(id)!;
    first.agentId = 'agt_other';
    expect(sealer.open(id)).toEqual(claims);
  });

  it('never opens an id sealed under another key, a damaged id or a non-id', () => {
    const sealer = createSessionSealer(randomBytes(32));
    const foreign = createSessionSealer(randomBytes(32)).seal(claims);
    expect(sealer.open(foreign)).toBeUndefined();
    const id = sealer.seal(claims);
    expect(sealer.open(id)).toEqual(claims);
    const body = id.slice('pss1.'.length);
    const flipped = `pss1.${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
    expect(sealer.open(flipped)).toBeUndefined();
    expect(sealer.open(`${id}A`)).toBeUndefined();
    for (const junk of ['', 'pss1.', 'pss1.AAAA', 'session-1', `pss1.${'A'.repeat(5000)}`])
      expect(sealer.open(junk)).toBeUndefined();
  });

  it('keeps opening ids after more sessions than its cache holds', () => {
    const sealer = createSessionSealer(randomBytes(32));
    const ids = Array.from({ length: 5000 }, (_, i) => sealer.seal({ ...claims, upstreamSessionId: `s${i}` }));
    for (const [i, id] of ids.entries()) expect(sealer.open(id)?.upstreamSessionId).toBe(`s${i}`);
    // The first ids were evicted by now and open again by deciphering.
    expect(sealer.open(ids[0]!)?.upstreamSessionId).toBe('s0');
  });
});

import { EventEmitter } from 'node:events';

import { describe, expect, it } from 'vitest';

import { drainedOrClosed } from '../../src/http/index.ts';

describe('drainedOrClosed', () => {
  it('leaves no listener behind however many times a writer waits (a long export waits thousands of times)', async () => {
    const res = new EventEmitter();
    for (let i = 0; i < 50; i++) {
      const waiting = drainedOrClosed(res);
      res.emit('drain');
      await waiting;
    }
    expect(res.listenerCount('drain')).toBe(0);
    expect(res.listenerCount('close')).toBe(0);
  });

  it('resolves when the response closes instead of draining', async () => {
    const res = new EventEmitter();
    const waiting = drainedOrClosed(res);
    res.emit('close');
    await expect(waiting).resolves.toBeUndefined();
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });
});

import type { EventEmitter } from 'node:events';

/**
 * Resolves once `res` drains or closes, leaving no listener behind: a long download waits on
 * back-pressure thousands of times, and a 'close' listener left from each wait would pile up.
 */
export function drainedOrClosed(res: EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

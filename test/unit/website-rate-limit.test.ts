/**
 * Pins the reusable rate limiter (src/rate-limit): the fixed window allows exactly `limit` requests
 * per client, the IETF RateLimit headers say so, client addresses are normalised (IPv4-mapped,
 * IPv6 /64, trusted proxy), and an unreachable Redis falls back to local counts with one warning.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { createLogger } from '../../src/log/index.ts';
import { clientAddress, createRateLimiter, createRedisClient, rateLimitHeaders } from '../../src/rate-limit/index.ts';

function captureLog() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { log: createLogger({ level: 'info', destination }), lines };
}

describe('createRateLimiter (memory)', () => {
  it('allows exactly the limit per client and window, then refuses with a reset time', async () => {
    const { log } = captureLog();
    const limiter = createRateLimiter({
      policy: { name: 'test', limit: 3, windowSeconds: 60 },
      keyPrefix: 'unit:',
      log,
    });
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('1.2.3.4'));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[3]!.resetSeconds).toBeGreaterThan(0);
    expect(decisions[3]!.resetSeconds).toBeLessThanOrEqual(60);
    expect(decisions[3]!.store).toBe('memory');
    expect((await limiter.consume('5.6.7.8')).allowed).toBe(true);
  });

  it('rejects nonsensical policies at creation', () => {
    const { log } = captureLog();
    expect(() =>
      createRateLimiter({ policy: { name: 'x', limit: 0, windowSeconds: 60 }, keyPrefix: 'u:', log }),
    ).toThrow(/limit/);
    expect(() =>
      createRateLimiter({ policy: { name: 'x', limit: 1, windowSeconds: 0.5 }, keyPrefix: 'u:', log }),
    ).toThrow(/windowSeconds/);
  });
});

describe('rateLimitHeaders', () => {
  it('writes the IETF draft structured fields', () => {
    const headers = rateLimitHeaders(
      { name: 'intent', limit: 30, windowSeconds: 60 },
      { allowed: true, limit: 30, remaining: 29, resetSeconds: 41, store: 'memory' },
    );
    expect(headers).toEqual({ 'RateLimit-Policy': '"intent";q=30;w=60', RateLimit: '"intent";r=29;t=41' });
  });
});

describe('clientAddress', () => {
  it.each([
    [{ socket: { remoteAddress: '203.0.113.9' }, ip: '198.51.100.1' }, false, '203.0.113.9'],
    [{ socket: { remoteAddress: '203.0.113.9' }, ip: '198.51.100.1' }, true, '198.51.100.1'],
    [{ socket: { remoteAddress: '::ffff:10.0.0.7' } }, false, '10.0.0.7'],
    [{ socket: { remoteAddress: '2001:db8:aa:bb:1:2:3:4' } }, false, '2001:db8:aa:bb::/64'],
    [{ socket: { remoteAddress: '2001:db8::1' } }, false, '2001:db8:0:0::/64'],
    [{ socket: { remoteAddress: '::1' } }, false, '0:0:0:0::/64'],
    [{ socket: {} }, false, 'unknown'],
  ])('keys %j (trust proxy %s) as %s', (req, trust, expected) => {
    expect(clientAddress(req, trust)).toBe(expected);
  });

  it('puts two addresses of one IPv6 /64 under one key', () => {
    expect(clientAddress({ socket: { remoteAddress: '2001:db8:1:2::a' } }, false)).toBe(
      clientAddress({ socket: { remoteAddress: '2001:db8:1:2:ffff::b' } }, false),
    );
  });
});

describe('createRateLimiter (Redis unavailable)', () => {
  it('falls back to per-instance counts and logs one warning', async () => {
    const { log, lines } = captureLog();
    // Nothing listens on port 1: every command fails at once (no offline queue).
    const redis = createRedisClient('redis://127.0.0.1:1', log);
    try {
      const limiter = createRateLimiter({
        policy: { name: 'down', limit: 2, windowSeconds: 60 },
        redis,
        keyPrefix: 'unit:',
        log,
      });
      const decisions = [];
      for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('9.9.9.9'));
      expect(decisions.map((d) => [d.allowed, d.store])).toEqual([
        [true, 'memory'],
        [true, 'memory'],
        [false, 'memory'],
      ]);
      const warnings = lines.filter((l) => l.includes('rate limits fall back'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, rate_limit: 'down' });
    } finally {
      redis.disconnect();
    }
  });
});

describe('createRedisClient (Redis that does not answer)', () => {
  it('gives up on a command after REDIS_COMMAND_TIMEOUT_MS, and the limiter counts locally', async () => {
    const { log } = captureLog();
    // A server that answers the client's ready check (INFO), then nothing: only the command
    // timeout ends the wait.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (data) => {
        if (/info/i.test(data.toString('latin1'))) {
          const info = '# Server\r\nloading:0\r\n';
          socket.write(`$${info.length}\r\n${info}\r\n`);
        }
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const redis = createRedisClient(`redis://127.0.0.1:${port}`, log, { commandTimeoutMs: 100 });
    expect(redis.options.commandTimeout).toBe(100);
    try {
      await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
      await expect(redis.get('k')).rejects.toThrow(/timed out/i);
      const limiter = createRateLimiter({
        policy: { name: 'silent', limit: 1, windowSeconds: 60 },
        redis,
        keyPrefix: 'unit:',
        log,
      });
      expect(await limiter.consume('9.9.9.9')).toMatchObject({ allowed: true, store: 'memory' });
    } finally {
      redis.disconnect();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

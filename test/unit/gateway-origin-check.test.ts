/**
 * Pins the gateway's DNS-rebinding protection (gateway/origin-check.ts): which Origin and Host
 * values it accepts by default, with the allow-lists, and when Plaza listens elsewhere than loopback.
 */
import { describe, expect, it } from 'vitest';

import { createOriginCheck, isLoopbackName, listensOnLoopback } from '../../gateway/index.ts';

const headers = (h: Record<string, string>) => ({ headers: h });

describe('createOriginCheck', () => {
  const local = createOriginCheck({
    publicBaseUrl: 'https://plaza.example.com',
    listenHost: '127.0.0.1',
    allowedOrigins: [],
    allowedHosts: [],
  });

  it("accepts Plaza's own origin and host, and a request without Origin", () => {
    expect(local(headers({ host: 'plaza.example.com' }))).toBeUndefined();
    expect(local(headers({ host: 'plaza.example.com:443' }))).toBeUndefined();
    expect(local(headers({ host: 'Plaza.Example.com', origin: 'https://plaza.example.com' }))).toBeUndefined();
    expect(local(headers({}))).toBeUndefined();
  });

  it('accepts loopback names and pages when Plaza listens on loopback', () => {
    for (const host of ['localhost:8080', '127.0.0.1:3000', '[::1]:8080', '127.9.9.9'])
      expect(local(headers({ host, origin: 'http://localhost:6274' })), host).toBeUndefined();
    expect(local(headers({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }))).toBeUndefined();
  });

  it('refuses a foreign Host (the rebinding attack) and a foreign Origin, naming the setting', () => {
    expect(local(headers({ host: 'evil.example.com', origin: 'http://evil.example.com' }))).toMatch(
      /^Host "evil.example.com" .*PLAZA_GATEWAY_ALLOWED_HOSTS/,
    );
    expect(local(headers({ host: '127.0.0.1:3000', origin: 'http://evil.example.com' }))).toMatch(
      /^Origin "http:\/\/evil.example.com" .*PLAZA_GATEWAY_ALLOWED_ORIGINS/,
    );
    for (const origin of ['null', 'file://', 'not a url', 'https://plaza.example.com.evil.net'])
      expect(local(headers({ host: 'plaza.example.com', origin })), origin).toBeDefined();
    expect(local(headers({ host: 'plaza.example.com/path' }))).toBeDefined();
  });

  it('accepts loopback only where Plaza is reachable on it', () => {
    const external = createOriginCheck({
      publicBaseUrl: 'https://plaza.example.com',
      listenHost: '10.0.0.5',
      allowedOrigins: [],
      allowedHosts: [],
    });
    expect(external(headers({ host: '127.0.0.1:8080' }))).toBeDefined();
    expect(external(headers({ host: 'plaza.example.com', origin: 'http://localhost:6274' }))).toBeDefined();
    expect(listensOnLoopback('0.0.0.0')).toBe(true);
    expect(listensOnLoopback('::')).toBe(true);
    expect(listensOnLoopback('10.0.0.5')).toBe(false);
  });

  it('takes the allow-lists: origins, hosts with or without port, and * for any', () => {
    const listed = createOriginCheck({
      publicBaseUrl: 'https://plaza.example.com',
      listenHost: '10.0.0.5',
      allowedOrigins: ['https://app.example.org'],
      allowedHosts: ['plaza.internal', 'gw.internal:8080'],
    });
    expect(listed(headers({ host: 'plaza.internal:9000', origin: 'https://app.example.org' }))).toBeUndefined();
    expect(listed(headers({ host: 'gw.internal:8080' }))).toBeUndefined();
    expect(listed(headers({ host: 'gw.internal:8081' }))).toBeDefined();
    // A page served under an accepted name is same-origin.
    expect(listed(headers({ host: 'plaza.internal', origin: 'http://plaza.internal' }))).toBeUndefined();
    expect(listed(headers({ host: 'plaza.internal', origin: 'https://app.example.net' }))).toBeDefined();
    const open = createOriginCheck({
      publicBaseUrl: 'https://plaza.example.com',
      listenHost: '10.0.0.5',
      allowedOrigins: ['*'],
      allowedHosts: ['*'],
    });
    expect(open(headers({ host: 'evil.example.com', origin: 'http://evil.example.com' }))).toBeUndefined();
  });

  it('knows the loopback names', () => {
    expect(['localhost', 'a.localhost', '127.0.0.1', '[::1]', '::1'].every(isLoopbackName)).toBe(true);
    expect(['localhost.evil.com', '128.0.0.1', '10.0.0.1', 'example.com'].some(isLoopbackName)).toBe(false);
  });
});

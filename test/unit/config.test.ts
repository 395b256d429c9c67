/** Pins the configuration contract: defaults, parsing, and errors that name the variable. */
import { describe, expect, it } from 'vitest';

import { ConfigError, EnvSchema, loadConfig } from '../../config/index.ts';

describe('loadConfig', () => {
  it('runs with nothing configured: port 8080, embedded storage in ./.plaza', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.dataDir).toMatch(/\.plaza$/);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.autoMigrate).toBe(true);
    expect(config.trustProxy).toBe(false);
    expect(config.telemetry.enabled).toBe(false);
    expect(config.publicBaseUrl).toBe('http://localhost:8080');
    expect(config.heapGrowingPercent).toBe(60);
    expect(loadConfig({ PLAZA_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(config.wasmTier).toBe('auto');
    expect(loadConfig({ PLAZA_WASM_TIER: 'optimizing' }).wasmTier).toBe('optimizing');
    expect(() => loadConfig({ PLAZA_WASM_TIER: 'turbofan' })).toThrow(/PLAZA_WASM_TIER/);
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      PLAZA_DATA_DIR: '/tmp/plaza-x',
      DATABASE_URL: 'postgresql://u:p@db:5432/plaza',
      REDIS_URL: 'redis://cache:6379',
      REDIS_COMMAND_TIMEOUT_MS: '2000',
      PUBLIC_BASE_URL: 'https://plaza.example/',
      LOG_LEVEL: 'warn',
      PLAZA_AUTO_MIGRATE: '0',
      PLAZA_TRUST_PROXY: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      dataDir: '/tmp/plaza-x',
      databaseUrl: 'postgresql://u:p@db:5432/plaza',
      redisUrl: 'redis://cache:6379',
      redisCommandTimeoutMs: 2000,
      publicBaseUrl: 'https://plaza.example',
      logLevel: 'warn',
      autoMigrate: false,
      trustProxy: 1,
      telemetry: { enabled: true, otlpEndpoint: 'http://otel:4318' },
    });
  });

  it.each([
    ['off', false],
    ['true', 1],
    ['2', 2],
    ['loopback, 10.0.0.0/8, fd00::1', ['loopback', '10.0.0.0/8', 'fd00::1']],
  ])('reads PLAZA_TRUST_PROXY=%s as trusting %j (never every X-Forwarded-For entry)', (value, expected) => {
    expect(loadConfig({ PLAZA_TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it('reads the gateway allow-lists of origins and hosts (DNS-rebinding protection), lower-cased', () => {
    expect(loadConfig({}).gateway).toMatchObject({ allowedOrigins: [], allowedHosts: [] });
    const { gateway } = loadConfig({
      PLAZA_GATEWAY_ALLOWED_ORIGINS: 'https://App.example.org, http://localhost:6274',
      PLAZA_GATEWAY_ALLOWED_HOSTS: 'plaza.internal,gw.internal:8080 , *',
    });
    expect(gateway.allowedOrigins).toEqual(['https://app.example.org', 'http://localhost:6274']);
    expect(gateway.allowedHosts).toEqual(['plaza.internal', 'gw.internal:8080', '*']);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '  ' }).port).toBe(8080);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://db/plaza'],
    ['REDIS_URL', 'not a url'],
    ['LOG_LEVEL', 'loud'],
    ['PLAZA_AUTO_MIGRATE', 'maybe'],
    ['PUBLIC_BASE_URL', 'ftp://x'],
    ['PLAZA_TRUST_PROXY', 'maybe'],
    ['PLAZA_TRUST_PROXY', '11'],
    ['PLAZA_TRUST_PROXY', '10.0.0.0/8, not-an-address'],
    ['PLAZA_GATEWAY_ALLOWED_ORIGINS', 'https://app.example.org/path'],
    ['PLAZA_GATEWAY_ALLOWED_ORIGINS', 'app.example.org'],
    ['PLAZA_GATEWAY_ALLOWED_HOSTS', 'http://plaza.internal'],
    ['PLAZA_GATEWAY_ALLOWED_HOSTS', 'plaza.internal/x'],
    ['PLAZA_HEAP_GROWING_PERCENT', '-1'],
    ['PLAZA_HEAP_GROWING_PERCENT', '301'],
    ['PLAZA_HEAP_GROWING_PERCENT', 'half'],
  ])('rejects %s=%s with an error naming the variable', (name, value) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(name);
    expect((caught as ConfigError).message).toContain(name);
  });

  it('knows the variables the README documents', () => {
    for (const name of [
      'PORT',
      'HOST',
      'PLAZA_DATA_DIR',
      'DATABASE_URL',
      'REDIS_URL',
      'PUBLIC_BASE_URL',
      'LOG_LEVEL',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    ]) {
      expect(Object.keys(EnvSchema.shape)).toContain(name);
    }
  });
});

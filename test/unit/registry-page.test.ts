/**
 * Pins how one page of the official registry API (v0.1) maps to listings: keep, remove or skip
 * (remotes at loopback, private or metadata addresses count as not connectable).
 */
import { describe, expect, it } from 'vitest';

import { decideEntry, parseRegistryPage, providerSlugFor } from '../../probes/index.ts';

const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const item = (remotes: unknown[], official: Record<string, unknown> = { status: 'active', isLatest: true }) => ({
  server: { name: 'io.github.acme/weather', description: 'Weather', remotes },
  _meta: { [OFFICIAL]: official },
});

describe('decideEntry', () => {
  it('keeps an active streamable-http server and records header names, never values', () => {
    const decision = decideEntry(
      item([
        {
          type: 'streamable-http',
          url: 'https://w.example/mcp',
          headers: [{ name: 'Authorization', value: 'Bearer {token}', isRequired: true }],
        },
      ]),
    );
    expect(decision).toEqual({
      kind: 'keep',
      server: {
        registryName: 'io.github.acme/weather',
        provider: 'io-github-acme-weather',
        url: 'https://w.example/mcp',
        summary: 'Weather',
        requiredCredentials: [{ name: 'Authorization', required: true }],
      },
    });
  });

  it('makes registry text storable, and skips a name or URL no row can hold (NUL, lone surrogates)', () => {
    const odd = {
      ...item([
        {
          type: 'streamable-http',
          url: 'https://w.example/mcp',
          headers: [{ name: 'X-Key\u0000', description: 'lone \ud800' }],
        },
      ]),
    };
    odd.server.description = 'Weather \u0000 now';
    expect(decideEntry(odd)).toMatchObject({
      kind: 'keep',
      server: {
        summary: 'Weather \ufffd now',
        requiredCredentials: [{ name: 'X-Key\ufffd', description: 'lone \ufffd', required: false }],
      },
    });
    expect(decideEntry({ ...odd, server: { ...odd.server, name: 'io.github.acme/\u0000' } })).toMatchObject({
      kind: 'skip',
    });
    expect(decideEntry(item([{ type: 'streamable-http', url: 'https://w.example/mcp\u0000' }]))).toMatchObject({
      kind: 'remove',
    });
  });

  it.each([
    ['deleted', item([{ type: 'streamable-http', url: 'https://w.example/mcp' }], { status: 'deleted' })],
    ['deprecated', item([{ type: 'streamable-http', url: 'https://w.example/mcp' }], { status: 'deprecated' })],
    ['SSE-only', item([{ type: 'sse', url: 'https://w.example/sse' }])],
    ['templated URL', item([{ type: 'streamable-http', url: 'https://{tenant}.w.example/mcp' }])],
    ['URL with credentials', item([{ type: 'streamable-http', url: 'https://u:p@w.example/mcp' }])],
    ['no remotes', item([])],
    ['localhost', item([{ type: 'streamable-http', url: 'http://localhost:3000/mcp' }])],
    ['loopback IP', item([{ type: 'streamable-http', url: 'http://127.0.0.1:8080/mcp' }])],
    ['private IP', item([{ type: 'streamable-http', url: 'http://10.0.0.5/mcp' }])],
    ['cloud metadata', item([{ type: 'streamable-http', url: 'http://169.254.169.254/mcp' }])],
  ])('removes a %s server', (_name, raw) => {
    expect(decideEntry(raw).kind).toBe('remove');
  });

  it('lists loopback and private remotes only where private targets are allowed, metadata never, and prefers a reachable remote', () => {
    const local = item([{ type: 'streamable-http', url: 'http://localhost:3000/mcp' }]);
    expect(decideEntry(local, true)).toMatchObject({ kind: 'keep', server: { url: 'http://localhost:3000/mcp' } });
    expect(decideEntry(item([{ type: 'streamable-http', url: 'http://169.254.169.254/mcp' }]), true).kind).toBe(
      'remove',
    );
    const both = item([
      { type: 'streamable-http', url: 'http://localhost:3000/mcp' },
      { type: 'streamable-http', url: 'https://w.example/mcp' },
    ]);
    expect(decideEntry(both)).toMatchObject({ kind: 'keep', server: { url: 'https://w.example/mcp' } });
    expect(parseRegistryPage({ servers: [local] }, true).decisions[0]!.kind).toBe('keep');
    expect(parseRegistryPage({ servers: [local] }).decisions[0]!.kind).toBe('remove');
  });

  it('skips older versions and things that are not entries', () => {
    expect(
      decideEntry(
        item([{ type: 'streamable-http', url: 'https://w.example/mcp' }], { status: 'active', isLatest: false }),
      ).kind,
    ).toBe('skip');
    expect(decideEntry({ nope: true }).kind).toBe('skip');
  });
});

describe('parseRegistryPage', () => {
  it('accepts nextCursor and next_cursor', () => {
    expect(parseRegistryPage({ servers: [], metadata: { nextCursor: 'a' } }).nextCursor).toBe('a');
    expect(parseRegistryPage({ servers: [], metadata: { next_cursor: 'b' } }).nextCursor).toBe('b');
    expect(parseRegistryPage({ servers: [], metadata: { nextCursor: null } }).nextCursor).toBeUndefined();
  });

  it('throws on a body that is not a server list', () => {
    expect(() => parseRegistryPage({ items: [] })).toThrow();
  });
});

describe('providerSlugFor', () => {
  it.each([
    ['io.github.acme/weather', 'io-github-acme-weather'],
    ['X', 'server-x'],
    [`com.example/${'a'.repeat(80)}`, expect.stringMatching(/^com-example-a+-[0-9a-f]{8}$/)],
  ])('maps %s to a valid slug', (name, slug) => {
    const result = providerSlugFor(name);
    expect(result).toEqual(slug);
    expect(result).toMatch(/^[a-z0-9][a-z0-9-]{1,62}$/);
  });
});

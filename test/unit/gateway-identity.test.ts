/**
 * Pins how the gateway stamps identity on a call (spec §2.4, §2.5): `_meta.platform` replaced not
 * merged, result meta with receipt_hint, caller-sent identity headers dropped, the third-party
 * credential moved to Authorization, and the EdDSA assertion verifiable against a JWKS.
 */
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';

import {
  type AginCard,
  signAssertion,
  stampCallParams,
  stampResult,
  upstreamHeaders,
  verifyAssertion,
} from '../../gateway/index.ts';
import { AuthError } from '../../src/kernel/index.ts';

const card: AginCard = {
  aginId: 'agin_1',
  agentPrincipal: 'principal:acc/agt',
  displayName: 'Support bot',
  ownerContext: 'acme',
};

describe('stampCallParams', () => {
  it('replaces a caller-sent _meta.platform and keeps other _meta keys', () => {
    const params = {
      name: 'crm.lookup',
      arguments: { id: 7 },
      _meta: { progressToken: 'p1', platform: { agin_id: 'forged', extra: 'x' } },
    };
    expect(stampCallParams(params, card, 'call_1')).toEqual({
      name: 'crm.lookup',
      arguments: { id: 7 },
      _meta: {
        progressToken: 'p1',
        platform: {
          agin_id: 'agin_1',
          agent_principal: 'principal:acc/agt',
          display_name: 'Support bot',
          owner_context: 'acme',
          call_id: 'call_1',
        },
      },
    });
    expect(params._meta.platform.agin_id).toBe('forged');
  });

  it('builds params from nothing', () => {
    expect(stampCallParams(undefined, card, 'c')['_meta']).toMatchObject({ platform: { call_id: 'c' } });
  });
});

describe('stampResult', () => {
  it('sets agin_id, call_id and receipt_hint, replacing the upstream value', () => {
    const result = stampResult(
      { content: [{ type: 'text', text: 'ok' }], isError: false, _meta: { platform: { agin_id: 'other' }, trace: 1 } },
      card,
      'call_2',
    );
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'ok' }],
      isError: false,
      _meta: { trace: 1, platform: { agin_id: 'agin_1', call_id: 'call_2' } },
    });
    expect((result['_meta'] as any).platform.receipt_hint).toMatch(/agin_1.*call_2/);
  });
});

describe('upstreamHeaders', () => {
  it('drops caller identity headers and credentials, moves the third-party token, adds Plaza identity', () => {
    const headers = upstreamHeaders(
      {
        'content-type': 'application/json',
        authorization: 'Bearer agent-token-for-plaza',
        cookie: 'a=b',
        'X-PLATFORM-AGIN-Id': 'forged',
        'x-platform-call-id': 'forged',
        'x-platform-upstream-authorization': 'Bearer third-party',
        'mcp-session-id': 's1',
      },
      card,
      { callId: 'call_3', assertion: 'jws' },
    );
    expect(headers).toEqual({
      'content-type': 'application/json',
      'mcp-session-id': 's1',
      authorization: 'Bearer third-party',
      'x-platform-agin-id': 'agin_1',
      'x-platform-agent-principal': 'principal:acc/agt',
      'x-platform-call-id': 'call_3',
      'x-platform-agin-assertion': 'jws',
    });
  });

  it('sends no Authorization when the caller has no third-party credential', () => {
    expect(
      upstreamHeaders({ authorization: 'Bearer agent' }, card, { callId: 'c', assertion: 'j' }),
    ).not.toHaveProperty('authorization');
  });

  it('sends no call id or assertion for a request that is no call, and leaves out the headers `drop` names', () => {
    const headers = upstreamHeaders(
      { host: 'plaza.example', 'content-length': '12', 'content-type': 'application/json', 'mcp-session-id': 's1' },
      card,
      undefined,
      new Set(['host', 'content-length', 'mcp-session-id']),
    );
    expect(headers).toEqual({
      'content-type': 'application/json',
      'x-platform-agin-id': 'agin_1',
      'x-platform-agent-principal': 'principal:acc/agt',
    });
  });
});

describe('assertions', () => {
  it('verify against the JWKS for the right audience only, and not after expiry', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA' };
    const jwks = createLocalJWKSet({ keys: [jwk] });
    const now = Math.floor(Date.now() / 1000);
    const token = await signAssertion(
      { kid: 'k1', privateKey },
      { card, callId: 'call_4', audience: 'https://crm.example/mcp', issuer: 'https://plaza.example', nowSeconds: now },
    );
    const claims = await verifyAssertion(token, jwks, {
      audience: 'https://crm.example/mcp',
      issuer: 'https://plaza.example',
    });
    expect(claims).toMatchObject({
      agin_id: 'agin_1',
      agent_principal: 'principal:acc/agt',
      call_id: 'call_4',
      exp: now + 60,
    });
    await expect(
      verifyAssertion(token, jwks, { audience: 'https://other.example/mcp', issuer: 'https://plaza.example' }),
    ).rejects.toBeInstanceOf(AuthError);
    const old = await signAssertion(
      { kid: 'k1', privateKey },
      { card, callId: 'c', audience: 'a', issuer: 'i', nowSeconds: now - 120 },
    );
    await expect(verifyAssertion(old, jwks, { audience: 'a', issuer: 'i' })).rejects.toBeInstanceOf(AuthError);
  });

  it('refuses a token of another type signed by the same key', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA' }] });
    const other = await new SignJWT({ agin_id: 'x' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'JWT' })
      .setAudience('a')
      .setIssuer('i')
      .setExpirationTime('1m')
      .sign(privateKey);
    await expect(verifyAssertion(other, jwks, { audience: 'a', issuer: 'i' })).rejects.toBeInstanceOf(AuthError);
  });
});

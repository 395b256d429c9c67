/**
 * Pins the gateway's 401 challenge: no error information without a credential (RFC 6750 §3.1),
 * and with one, `invalid_token` and the reason as an `error_description` in only the characters
 * RFC 6750 §3 allows, whatever the reason's text holds; `resource_metadata` (RFC 9728 §5.1) when
 * Plaza offers OAuth, and `insufficient_scope` with the scope to ask for (RFC 6750 §3.1).
 */
import { describe, expect, it } from 'vitest';

import { bearerChallenge } from '../../gateway/index.ts';

describe('bearerChallenge', () => {
  it.each([undefined, ''])('gives a request without a credential (%j) the realm only', (authorization) => {
    expect(bearerChallenge(authorization, 'Send the agent credential.')).toBe('Bearer realm="plaza"');
  });

  it.each([
    ['Invalid or revoked agent credential.', 'Invalid or revoked agent credential.'],
    ['an agent token (agt_…)', 'an agent token (agt_...)'],
    ['must be "Bearer <token>"', "must be 'Bearer <token>'"],
    ['a\\b', 'ab'],
    ['café — naïve\tline\nbreak \u0000', 'cafe  naive line break '],
  ])('writes the reason %j as an error_description RFC 6750 allows', (reason, description) => {
    const challenge = bearerChallenge('Bearer agt_x', reason);
    expect(challenge).toBe(`Bearer realm="plaza", error="invalid_token", error_description="${description}"`);
    expect(challenge.match(/error_description="(.*)"$/)![1]).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
  });

  it('names the Protected Resource Metadata with or without a credential', () => {
    const metadata = 'https://plaza.example/.well-known/oauth-protected-resource/mcp';
    expect(bearerChallenge(undefined, 'Send the agent credential.', { resourceMetadata: metadata })).toBe(
      `Bearer realm="plaza", resource_metadata="${metadata}"`,
    );
    expect(bearerChallenge('Bearer x', 'Invalid.', { resourceMetadata: metadata })).toBe(
      `Bearer realm="plaza", resource_metadata="${metadata}", error="invalid_token", error_description="Invalid."`,
    );
  });

  it('asks for the missing scope with insufficient_scope', () => {
    expect(bearerChallenge('Bearer x', 'Lacks mcp.', { insufficientScope: 'mcp' })).toBe(
      'Bearer realm="plaza", error="insufficient_scope", scope="mcp", error_description="Lacks mcp."',
    );
  });
});

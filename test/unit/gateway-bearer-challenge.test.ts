/**
 * Pins the gateway's 401 challenge: no error information without a credential (RFC 6750 §3.1),
 * and with one, `invalid_token` and the reason as an `error_description` in only the characters
 * RFC 6750 §3 allows, whatever the reason's text holds.
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
});

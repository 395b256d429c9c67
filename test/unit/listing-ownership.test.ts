/**
 * Pins what counts as a change to a listing (a re-POST or PATCH that changes nothing answers
 * `updated: false`; one that changes a field must not be taken for the same listing), and which
 * PATCH bodies are refused.
 */
import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/kernel/index.ts';
import { type Endpoint, ListingBodySchema, parseListingChanges } from '../../src/marketplace/index.ts';
import { changedDetails, detailsOfBody, detailsOfChanges } from '../../src/marketplace/listing-ownership.ts';

const body = ListingBodySchema.parse({
  provider: 'weather-co',
  url: 'https://weather.example/mcp',
  registered_by: 'Ops@Example.com',
  summary: 'Forecasts.',
  required_credentials: ['TOKEN', { name: 'X-Region', description: 'region', required: false }],
});
const stored = {
  ...detailsOfBody(body),
  id: 'mcp_1',
  provider: 'weather-co',
  url: 'https://weather.example/mcp',
  accountId: 'acc_1',
} as unknown as Endpoint;

describe('changedDetails', () => {
  it('finds nothing changed in the same listing sent again', () => {
    expect(changedDetails(stored, detailsOfBody(body))).toEqual({});
  });

  it.each([
    ['the summary', { summary: 'Forecasts and alerts.' }, { summary: 'Forecasts and alerts.' }],
    ['an optional field given', { audience: 'travel agents' }, { audience: 'travel agents' }],
    [
      'a credential description',
      { required_credentials: ['TOKEN'] },
      { requiredCredentials: [{ name: 'TOKEN', required: true }] },
    ],
  ])('finds %s changed', (_name, over, changed) => {
    expect(changedDetails(stored, detailsOfBody(ListingBodySchema.parse({ ...body, ...over })))).toEqual(changed);
  });

  it('compares only the fields a PATCH names', () => {
    expect(changedDetails(stored, detailsOfChanges(parseListingChanges({ agin_support: true })))).toEqual({
      aginSupport: true,
    });
    expect(changedDetails(stored, detailsOfChanges(parseListingChanges({ summary: 'Forecasts.' })))).toEqual({});
  });
});

describe('parseListingChanges', () => {
  it.each([
    ['the URL', { url: 'https://elsewhere.example/mcp' }, /url: cannot be changed/],
    ['the provider slug', { provider: 'other' }, /provider: cannot be changed/],
    ['nothing', {}, /at least one field/],
    ['an unknown field', { owner: 'me' }, /unknown field/],
  ])('refuses a change of %s', (_name, value, message) => {
    expect(() => parseListingChanges(value)).toThrow(ValidationError);
    expect(() => parseListingChanges(value)).toThrow(message);
  });

  it('takes null to clear an optional text', () => {
    expect(detailsOfChanges(parseListingChanges({ audience: null }))).toEqual({ audience: null });
  });
});

describe('detailsOfBody', () => {
  it('clears an optional field a POST leaves out', () => {
    const withAudience = { ...stored, audience: 'travel agents' } as Endpoint;
    expect(changedDetails(withAudience, detailsOfBody(body))).toEqual({ audience: null });
  });
});

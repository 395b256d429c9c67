/** The NUL checks of JSON bodies: the `\u0000` escape is found (not an escaped backslash before `u0000`), and the field holding it is named. */
import { describe, expect, it } from 'vitest';

import { hasNulEscape, refuseNulInJson } from '../../src/http/index.ts';

describe('hasNulEscape', () => {
  it.each([
    [JSON.stringify({ a: 'x\u0000y' }), true],
    [JSON.stringify(['\u0000']), true],
    [JSON.stringify({ a: '\\\u0000' }), true],
    [JSON.stringify({ a: '\\u0000' }), false],
    [JSON.stringify({ a: '\\\\u0000' }), false],
    [JSON.stringify({ a: 'u0000 \u0001' }), false],
    ['{}', false],
  ])('%s -> %s', (json, expected) => {
    expect(hasNulEscape(Buffer.from(json))).toBe(expected);
  });
});

describe('refuseNulInJson', () => {
  const verify =
    (json: string, encoding = 'utf-8') =>
    () =>
      refuseNulInJson(undefined, undefined, Buffer.from(json, encoding === 'utf-16le' ? 'utf16le' : 'utf8'), encoding);

  it('names the field holding a NUL, however deep', () => {
    expect(verify(JSON.stringify({ a: [{ b: 'x\u0000' }] }))).toThrow(/a\.0\.b: must not contain NUL/);
    expect(verify(`${'['.repeat(50_000)}"\\u0000"${']'.repeat(50_000)}`)).toThrow(/NUL/);
    expect(verify(JSON.stringify({ 'k\u0000': 1 }))).toThrow(/k\\u0000: must not contain NUL/);
  });

  it("names the field as the surface does: OpenAI's messages[0].content on the token API, a.0.b on the website", () => {
    const at = (url: string, json: string) => () => refuseNulInJson({ url }, undefined, Buffer.from(json), 'utf-8');
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x\u0000' }] }] });
    expect(at('/api/v1/chat/completions?x=1', body)).toThrow(
      expect.objectContaining({
        param: 'messages[0].content[0].text',
        message: expect.stringMatching(/messages\[0\]\.content\[0\]\.text: must not/),
      }),
    );
    expect(at('/API/V1/chat/completions/', body)).toThrow(
      expect.objectContaining({ param: 'messages[0].content[0].text' }),
    );
    expect(at('/api/auth/guest-token', JSON.stringify({ a: ['\u0000'] }))).toThrow(
      expect.objectContaining({ param: 'a[0]' }),
    );
    expect(at('/api/leads', body)).toThrow(expect.objectContaining({ param: 'messages.0.content.0.text' }));
  });

  it('finds a NUL in a UTF-16 body, and lets clean bodies and broken JSON through', () => {
    expect(verify(JSON.stringify({ a: 'x\u0000' }), 'utf-16le')).toThrow(/a: must not contain NUL/);
    expect(verify(JSON.stringify({ a: '\\u0000' }))).not.toThrow();
    expect(verify('{"a":"\\u0000"')).not.toThrow();
  });
});

/**
 * fast-check arbitraries of hostile HTTP requests for route fuzzing: bodies of wrong types,
 * missing and unknown fields, huge strings, deep nesting, unicode (lone surrogates, NUL),
 * prototype-pollution keys, invalid and truncated JSON; random query strings and path
 * parameters (raw percent escapes included); wrong content types; each credential a route may or
 * may not accept. Near-valid values come from the route, so the accepted paths are reached too.
 */
import fc from 'fast-check';

/** The credentials a request can carry (see {@link FuzzRequest}). */
export const AUTH_VARIANTS = [
  'none',
  'garbage',
  'basic',
  'unknown-key',
  'guest',
  'api-key',
  'agent',
  'session',
  'session-no-csrf',
] as const;
export type AuthVariant = (typeof AUTH_VARIANTS)[number];

/** One request as sent: params already in their path form (percent-encoded or raw). */
export interface FuzzRequest {
  auth: AuthVariant;
  params: Record<string, string>;
  /** Query string without `?`. */
  query: string;
  body: string | undefined;
  contentType: string | undefined;
  accept: string | undefined;
  headers: Record<string, string>;
}

/** What a route's fuzzing is built from (values unencoded; the request arbitrary encodes them). */
export interface RouteFuzz {
  params?: Record<string, fc.Arbitrary<string>>;
  /** Near-valid query parameters; values that are not strings are sent as JSON. */
  query?: fc.Arbitrary<Record<string, unknown>>;
  /** Near-valid JSON bodies (objects); random JSON when absent. */
  body?: fc.Arbitrary<unknown>;
  /** Replaces the JSON wire bodies entirely (form posts). */
  wire?: fc.Arbitrary<string>;
  contentTypes?: fc.Arbitrary<string | undefined>;
  accepts?: fc.Arbitrary<string | undefined>;
  /** A request the route accepts (2xx). Always run first. */
  good: Partial<FuzzRequest>;
  /** A request it refuses (4xx), when it refuses anything at all. Always run first. */
  bad?: Partial<FuzzRequest>;
}

export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

/** Strings that tend to break things. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\udfff',
      '🙂',
      '\u202e',
      '%00',
      '%',
      '../../etc/passwd',
      "' OR 1=1 --",
      '<script>alert(1)</script>',
      'null',
      'true',
      '0',
      '-1',
      '1e309',
      'NaN',
      ...PROTO_KEYS,
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((n) => 'x'.repeat(n)) },
);

/** Any JSON-ish value, often a nasty string. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 2 ** 53, 1e308) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 3 }) },
);

/**
 * Near-valid objects over `fields` (each a good-value arbitrary): all good with `required`
 * present, a mix of good and nasty values with any fields missing, or that plus an unknown or
 * prototype key.
 */
export function near(
  fields: Record<string, fc.Arbitrary<unknown>>,
  required: string[] = [],
): fc.Arbitrary<Record<string, unknown>> {
  const good = fc.record(fields, { requiredKeys: required });
  const mixed = fc.record(
    Object.fromEntries(
      Object.entries(fields).map(([k, a]) => [
        k,
        fc.oneof({ weight: 2, arbitrary: a }, { weight: 1, arbitrary: nastyValue }),
      ]),
    ),
    { requiredKeys: [] },
  );
  const extra = fc
    .tuple(
      mixed,
      fc.oneof(fc.constantFrom(...PROTO_KEYS, 'unknown_field', 'id', 'admin'), fc.string({ maxLength: 12 })),
      nastyValue,
    )
    .map(([o, k, v]) => {
      const copy: Record<string, unknown> = { ...o };
      Object.defineProperty(copy, k, { value: v, enumerable: true, configurable: true, writable: true });
      return copy;
    });
  return fc.oneof({ weight: 3, arbitrary: good }, { weight: 3, arbitrary: mixed }, { weight: 1, arbitrary: extra });
}

const deep = fc
  .tuple(fc.constantFrom(64, 2_000, 100_000), fc.boolean())
  .map(([n, arrays]) => (arrays ? `${'['.repeat(n)}1${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`));
const pollution = fc.constantFrom(
  '{"__proto__":{"admin":true,"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"__proto__":null}',
  '[{"__proto__":{"length":1e9}}]',
  '{"toString":1,"valueOf":"x","hasOwnProperty":null}',
);
const brokenJson = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom(
    '{',
    '{"a":',
    '[1,2',
    '{"a":1,}',
    "{'a':1}",
    'NaN',
    'undefined',
    '\u0000',
    '\ufeff{}',
    '{"a":"\\ud800"}',
    '{"a":"\\u0000"}',
    '1'.repeat(400),
  ),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v).slice(0, -1)),
);
/** Bodies near the 1 MiB limit and over it (413). */
const huge = fc.constantFrom(900 * 1024, 1_200 * 1024).map((n) => JSON.stringify({ text: 'a'.repeat(n) }));

/** Wire bodies for a JSON route: mostly near-valid JSON, then every kind of hostile body. */
export function wireBody(body: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: body.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: pollution },
    { weight: 1, arbitrary: deep },
    { weight: 2, arbitrary: brokenJson },
    { weight: 1, arbitrary: huge },
    { weight: 1, arbitrary: fc.constant('') },
  );
}

const JSON_TYPES = fc.oneof(
  { weight: 10, arbitrary: fc.constant<string | undefined>('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom<string | undefined>(
      'application/json; charset=utf-8',
      'application/json; charset=iso-8859-1',
      'application/json; charset=utf-16',
      'application/merge-patch+json',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/json, text/plain',
      '',
      undefined,
    ),
  },
);
const ACCEPTS = fc.constantFrom<string | undefined>(
  undefined,
  'application/json',
  '*/*',
  'text/html',
  'text/html,application/xhtml+xml',
  'application/xml',
  'text/event-stream',
  'image/png;q=0.1',
);

/** Query values as they arrive encoded; raw garbage included. */
function queryString(near: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> {
  // Kept under Node's 16 KiB header limit, past which the HTTP parser itself answers 431.
  const encode = (o: Record<string, unknown>) =>
    new URLSearchParams(
      Object.entries(o).map(([k, v]): [string, string] => [
        k,
        (typeof v === 'string' ? v : (JSON.stringify(v) ?? '')).slice(0, 2_000),
      ]),
    )
      .toString()
      .slice(0, 6_000);
  const extra = fc.dictionary(
    fc.oneof(fc.constantFrom(...PROTO_KEYS, 'a[b]', 'a[]', 'limit', 'cursor', 'q'), fc.string({ maxLength: 10 })),
    fc.oneof(
      nastyString.map((s) => s.slice(0, 2_000)),
      fc.constant(''),
    ),
    { maxKeys: 4 },
  );
  return fc.oneof(
    { weight: 5, arbitrary: near.map(encode) },
    { weight: 2, arbitrary: fc.tuple(near, extra).map(([a, b]) => `${encode(a)}&${encode(b)}`) },
    { weight: 1, arbitrary: fc.tuple(near, near).map(([a, b]) => `${encode(a)}&${encode(b)}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%E0%A4%A',
        '%ZZ=1',
        '&&&',
        '=x',
        'a=%00',
        'limit=1&limit=2',
        '__proto__[x]=1',
        'a[b][c]=1',
        '?=?',
        ';;',
      ),
    },
    { weight: 2, arbitrary: fc.constant('') },
  );
}

function safeEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate: not encodable; sent as the replacement character instead.
    return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

/** A path parameter: a near-valid value, a nasty one (encoded), or raw escapes the router must decode. */
function pathParam(near: fc.Arbitrary<string> | undefined): fc.Arbitrary<string> {
  // `.` and `..` are left out: the URL parser would resolve them into another route's path.
  const nasty = nastyString
    .filter((s) => s !== '' && s !== '.' && s !== '..')
    .map((s) => safeEncode(s.slice(0, 3_000)).slice(0, 6_000));
  const raw = fc.constantFrom(
    '%00',
    '%ZZ',
    '%',
    '%2F',
    'a%2Fb',
    '%E0%A4%A',
    '%C0%AE%C0%AE',
    '..%2F..%2F',
    '%25',
    '%F0%9F%99%82',
    'x'.repeat(4_000),
  );
  const hostile = fc.oneof({ weight: 3, arbitrary: nasty }, { weight: 1, arbitrary: raw });
  return near ? fc.oneof({ weight: 4, arbitrary: near.map(safeEncode) }, { weight: 4, arbitrary: hostile }) : hostile;
}

const garbageHeaders = fc
  .record(
    {
      'accept-language': fc.oneof(
        fc.constantFrom('zh-CN', 'en', 'fr;q=x', '*', ',,,', 'zh-Hant-TW;q=0.9, en;q=0.1'),
        fc.string({ maxLength: 40 }),
      ),
      cookie: fc.oneof(
        fc.constantFrom(
          'plaza_locale=zh-CN',
          'plaza_locale=%E0',
          'plaza_session=%E0%A4%A',
          'plaza_session=nope; plaza_csrf=x',
          'a',
          '=;=;',
        ),
        fc.string({ maxLength: 40 }),
      ),
      'if-none-match': fc.constantFrom('*', '"x"', 'W/"x"', ','),
      'x-forwarded-for': fc.constantFrom('1.2.3.4', 'not an ip', '::1, 999.1.1.1'),
    },
    { requiredKeys: [] },
  )
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v))));

/** Random requests for one route: near-valid and hostile parts combined, every credential. */
export function fuzzRequest(method: string, path: string, fuzz: RouteFuzz): fc.Arbitrary<FuzzRequest> {
  const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const params = fc.record(Object.fromEntries(names.map((n) => [n, pathParam(fuzz.params?.[n])])));
  const hasBody = method !== 'GET';
  const body: fc.Arbitrary<string | undefined> = hasBody
    ? fc.oneof(
        { weight: 8, arbitrary: fuzz.wire ?? wireBody(fuzz.body ?? fc.jsonValue({ maxDepth: 3 })) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : fc.constant(undefined);
  return fc.record({
    auth: fc.constantFrom(...AUTH_VARIANTS),
    params,
    query: queryString(fuzz.query ?? fc.constant({})),
    body,
    contentType: hasBody ? (fuzz.contentTypes ?? JSON_TYPES) : fc.constant(undefined),
    accept: fuzz.accepts ?? ACCEPTS,
    headers: garbageHeaders,
  });
}

/** A complete request from a partial example (defaults: no credential, no query, no body, JSON). */
export function exampleRequest(partial: Partial<FuzzRequest>): FuzzRequest {
  return {
    auth: 'none',
    params: {},
    query: '',
    body: undefined,
    contentType: partial.body === undefined ? undefined : 'application/json',
    accept: 'application/json',
    headers: {},
    ...partial,
  };
}

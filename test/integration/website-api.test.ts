/**
 * Pins the public website API end to end (spec §2.11–2.14, §4.6, §7): every route is called and
 * each answer, success or error, is validated against the served /openapi.json with
 * openapi-response-validator; locale negotiation (query, header, fallback); ETag/304 on the
 * catalog; intent and lead validation codes; lead storage with the 24-hour e-mail + scenario dedupe.
 */
import responseValidatorModule from 'openapi-response-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

// A CommonJS package with an `exports.default`: under Node's ESM interop the class sits one level down.
const OpenAPIResponseValidator = ((responseValidatorModule as unknown as { default?: unknown }).default ??
  responseValidatorModule) as typeof responseValidatorModule;

type Doc = { paths: Record<string, Record<string, { responses: Record<string, any> }>>; components: any };

describe.each(BACKENDS)('public website API on %s', (backend) => {
  let plaza: TestPlaza;
  let doc: Doc;
  let now = Date.parse('2026-11-21T10:00:00Z');

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      clock: { now: () => now },
      env: {
        PLAZA_RATE_LIMIT_INTENT_PER_MIN: '10000',
        PLAZA_RATE_LIMIT_LEADS_PER_MIN: '10000',
        PUBLIC_BASE_URL: 'https://plaza.example',
      },
    });
    doc = (await (await fetch(`${plaza.url}/openapi.json`)).json()) as Doc;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const validators = new Map<string, InstanceType<typeof OpenAPIResponseValidator>>();
  function validatorFor(method: string, path: string) {
    const key = `${method} ${path}`;
    let validator = validators.get(key);
    if (!validator) {
      validator = new OpenAPIResponseValidator({
        responses: doc.paths[path]![method]!.responses,
        components: doc.components,
      });
      validators.set(key, validator);
    }
    return validator;
  }

  /** Fetches and checks the answer against the contract's response for that path, method and status. */
  async function call(
    method: 'get' | 'post',
    path: string,
    init: { body?: unknown; raw?: string; headers?: Record<string, string>; query?: string } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined;
    if (init.raw !== undefined) body = init.raw;
    else if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${plaza.url}${path}${init.query ?? ''}`, { method: method.toUpperCase(), headers, body });
    const text = await res.text();
    const json = text === '' ? undefined : JSON.parse(text);
    const operation = doc.paths[path]?.[method];
    expect(operation, `${method} ${path} is documented`).toBeDefined();
    expect(Object.keys(operation!.responses), `status ${res.status} of ${method} ${path} is documented`).toContain(
      String(res.status),
    );
    if (res.status !== 304) {
      const errors = validatorFor(method, path).validateResponse(res.status, json);
      expect(errors, JSON.stringify(errors)).toBeUndefined();
      expect(json.request_id).toBe(res.headers.get('x-request-id'));
    }
    return { res, json };
  }

  describe('GET /health', () => {
    it('matches the contract', async () => {
      const { res } = await call('get', '/health');
      expect(res.status).toBe(200);
    });
  });

  describe.each([
    ['/api/products', 'products'],
    ['/api/scenarios', 'scenarios'],
    ['/api/plans', 'plans'],
    ['/api/manifesto', 'manifesto'],
  ])('GET %s', (path, field) => {
    it.each(['en', 'zh-CN'])('answers the §2.11 records in %s', async (locale) => {
      const { res, json } = await call('get', path, { query: `?locale=${locale}` });
      expect(res.status).toBe(200);
      expect(json.locale).toBe(locale);
      expect(json[field]).toBeTruthy();
      expect(res.headers.get('content-language')).toBe(locale);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('vary')).toMatch(/Accept-Language/i);
    });

    it('answers 304 to a matching If-None-Match and 200 to a stale one', async () => {
      const first = await call('get', path);
      const etag = first.res.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await call('get', path);
      expect(again.res.headers.get('etag')).toBe(etag);
      expect(again.json.request_id).not.toBe(first.json.request_id);
      const cached = await call('get', path, { headers: { 'if-none-match': etag } });
      expect(cached.res.status).toBe(304);
      expect(cached.json).toBeUndefined();
      const stale = await call('get', path, { headers: { 'if-none-match': '"stale"' } });
      expect(stale.res.status).toBe(200);
      const other = await call('get', path, { query: '?locale=zh-CN', headers: { 'if-none-match': etag } });
      expect(other.res.status).toBe(200);
      expect(other.res.headers.get('etag')).not.toBe(etag);
    });
  });

  describe('locale negotiation', () => {
    it.each([
      [{ 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' }, '', 'zh-CN'],
      [{ 'accept-language': 'fr-FR,zh;q=0.5' }, '', 'zh-CN'],
      [{ 'accept-language': 'zh-CN' }, '?locale=en', 'en'],
      [{ 'accept-language': 'fr, de;q=0.5' }, '', 'en'],
      [{}, '?locale=xx', 'en'],
    ])('with headers %j and query %j answers %s', async (headers, query, locale) => {
      const { json } = await call('get', '/api/scenarios', { headers, query });
      expect(json.locale).toBe(locale);
    });

    it('serves the same ids in both locales with translated copy', async () => {
      const en = (await call('get', '/api/plans', { query: '?locale=en' })).json;
      const zh = (await call('get', '/api/plans', { query: '?locale=zh-CN' })).json;
      expect(zh.plans.map((p: any) => p.id)).toEqual(en.plans.map((p: any) => p.id));
      expect(zh.plans[1].name).not.toBe(en.plans[1].name);
      expect(en.plans[0].checkoutUrl).toBe('https://plaza.example/account?plan=starter');
    });

    it("makes every product card's call to action a link to a page that exists", async () => {
      for (const locale of ['en', 'zh-CN']) {
        const home = await (await fetch(`${plaza.url}/?locale=${locale}`, { headers: { accept: 'text/html' } })).text();
        const products = (await call('get', '/api/products', { query: `?locale=${locale}` })).json.products as {
          cta: string;
        }[];
        const links = [...home.matchAll(/<p class="cta"><a href="([^"]+)">([^<]+)<\/a><\/p>/g)];
        expect(links.map((m) => m[2])).toEqual(products.map((p) => p.cta));
        for (const [, href] of links) {
          const target = new URL(href!, plaza.url);
          const page = await fetch(`${plaza.url}${target.pathname}`, { headers: { accept: 'text/html' } });
          expect(page.status, href).toBe(200);
          if (target.hash) expect(await page.text(), href).toContain(`id="${target.hash.slice(1)}"`);
        }
      }
    });

    it('leads every plan button to a page that exists (sign-up on Account, the others to the sales form)', async () => {
      for (const locale of ['en', 'zh-CN']) {
        for (const plan of (await call('get', '/api/plans', { query: `?locale=${locale}` })).json.plans as {
          id: string;
          name: string;
          checkoutUrl: string;
        }[]) {
          const target = new URL(plan.checkoutUrl);
          const page = await fetch(`${plaza.url}${target.pathname}${target.search}`, {
            headers: { accept: 'text/html', 'accept-language': locale },
          });
          expect(page.status, plan.checkoutUrl).toBe(200);
          const html = await page.text();
          if (target.hash) expect(html, plan.checkoutUrl).toContain(`id="${target.hash.slice(1)}"`);
          // Every plan's page names the plan chosen; the sales form starts on the scenario that plan serves.
          if (target.pathname === '/account')
            expect(html, plan.checkoutUrl).toMatch(new RegExp(`id="account-plan">[^<]*${plan.name}`));
          if (target.pathname === '/') {
            const chosen = plan;
            expect(html, plan.checkoutUrl).toMatch(new RegExp(`id="lead-plan">[^<]*${chosen.name}`));
            const scenario = (
              (await call('get', '/api/scenarios', { query: `?locale=${locale}` })).json.scenarios as {
                id: string;
                planId: string;
              }[]
            ).find((s) => s.planId === chosen.id);
            expect(html, plan.checkoutUrl).toContain(`<option value="${scenario!.id}" selected>`);
          }
        }
      }
    });
  });

  describe('POST /api/agent/intent', () => {
    it('recommends a scenario, products and plan (§2.12), ignoring any Authorization header', async () => {
      const { res, json } = await call('post', '/api/agent/intent', {
        body: { prompt: 'Our shop needs agents that handle orders, refunds and inventory' },
        headers: { authorization: 'Bearer not-a-real-token' },
      });
      expect(res.status).toBe(200);
      expect(json).toMatchObject({
        status: 'ok',
        locale: 'en',
        scenario: { id: 'commerce' },
        planId: 'business',
        planName: 'Business',
      });
      expect(json.nextActions).toContain('/api/leads');
      expect(json.nextActions).toContain('/api/plans');
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"intent";q=10000;w=60$/);
    });

    it('answers a Chinese prompt in Chinese when no language is preferred', async () => {
      const { json } = await call('post', '/api/agent/intent', {
        body: { prompt: '我们需要审计每个智能体的访问权限，满足合规要求' },
      });
      expect(json).toMatchObject({
        locale: 'zh-CN',
        scenario: { id: 'enterprise', name: '企业治理' },
        planName: '企业版',
      });
      expect(json.answer).toContain('审计');
    });

    it.each([
      ['a missing prompt', { body: {} }],
      ['an empty prompt', { body: { prompt: '' } }],
      ['a blank prompt', { body: { prompt: ' \n\t ' } }],
      ['a number', { body: { prompt: 42 } }],
      ['an over-long prompt', { body: { prompt: 'x'.repeat(2001) } }],
      ['a prompt with a lone surrogate', { raw: '{"prompt":"help \\ud800 me"}' }],
      ['an unknown field', { body: { prompt: 'hello', extra: true } }],
      ['an array body', { body: ['prompt'] }],
      ['malformed JSON', { raw: '{"prompt": "unterminated' }],
      [
        'a non-JSON content type',
        { raw: 'prompt=hello', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      ],
      ['no body at all', {}],
    ])('rejects %s with 400 invalid_prompt', async (_what, init) => {
      const { res, json } = await call('post', '/api/agent/intent', init);
      expect(res.status).toBe(400);
      expect(json).toMatchObject({ success: false, code: 'invalid_prompt' });
    });
  });

  describe('POST /api/leads', () => {
    it('stores a lead (§2.13); a later lead of the same e-mail and scenario is stored beside it, never over it', async () => {
      const first = await call('post', '/api/leads', {
        body: { email: 'Dana@Example.com', scenario: 'growth', company: 'Acme', teamSize: '11-50' },
      });
      expect(first.res.status).toBe(201);
      expect(first.json).toMatchObject({
        status: 'received',
        scenario: { id: 'growth' },
        planName: 'Growth',
        nextActions: ['/api/plans', '/api/products'],
      });
      expect(first.json.recommendedProducts).toContain('Token API');
      expect(first.json.nextStep).toContain('dana@example.com');
      // The thank-you text says what a second form does: it is stored beside this one, never over it.
      expect(first.json.nextStep).toContain('does not change this request');
      expect(first.json.nextStep).not.toMatch(/updates/);
      const stored = await plaza.db.prisma.lead.findFirstOrThrow({ where: { email: 'dana@example.com' } });

      // Anyone may send a lead under any address: the repeat, from a stranger, must not change
      // what Dana stored, nor learn from the answer that Dana's address sent one.
      now += 23 * 3600_000;
      const repeat = await call('post', '/api/leads', {
        body: { email: 'dana@example.com', scenario: 'growth', company: 'Not Acme', painPoint: 'Manual CRM updates' },
        headers: { 'accept-language': 'zh-CN' },
      });
      expect(repeat.res.status).toBe(201);
      expect(repeat.json.status).toBe('received');
      expect(repeat.json.planName).toBe('成长版');
      expect(repeat.json.nextStep).toContain('不会修改本次需求');
      expect(repeat.json.nextStep).not.toContain('更新');
      const control = await call('post', '/api/leads', {
        body: {
          email: 'nobody-yet@example.com',
          scenario: 'growth',
          company: 'Not Acme',
          painPoint: 'Manual CRM updates',
        },
        headers: { 'accept-language': 'zh-CN' },
      });
      const shape = (json: Record<string, unknown>) => ({
        ...json,
        nextStep: String(json['nextStep']).replace(/\S+@example\.com/, '<email>'),
        request_id: undefined,
      });
      expect(shape(repeat.json)).toEqual(shape(control.json));

      const rows = await plaza.db.prisma.lead.findMany({
        where: { email: 'dana@example.com' },
        orderBy: { createdAt: 'asc' },
      });
      expect(rows).toHaveLength(2);
      expect(rows[0]).toEqual(stored);
      expect(rows[1]).toMatchObject({
        scenario: 'growth',
        company: 'Not Acme',
        teamSize: null,
        painPoint: 'Manual CRM updates',
        locale: 'zh-CN',
      });

      const otherScenario = await call('post', '/api/leads', {
        body: { email: 'dana@example.com', scenario: 'commerce' },
      });
      expect(otherScenario.res.status).toBe(201);
      expect(await plaza.db.prisma.lead.count({ where: { email: 'dana@example.com' } })).toBe(3);
      expect(await plaza.db.prisma.account.count()).toBe(0);
    });

    it('stores an identical repeat within 24 h once, and answers it as the first', async () => {
      const body = { email: 'twice@example.com', scenario: 'developer', company: 'Twice' };
      const first = await call('post', '/api/leads', { body });
      now += 3600_000;
      const again = await call('post', '/api/leads', { body });
      expect([first.res.status, again.res.status]).toEqual([201, 201]);
      expect({ ...again.json, request_id: undefined }).toEqual({ ...first.json, request_id: undefined });
      expect(await plaza.db.prisma.lead.count({ where: { email: 'twice@example.com' } })).toBe(1);
      now += 24 * 3600_000;
      await call('post', '/api/leads', { body });
      expect(await plaza.db.prisma.lead.count({ where: { email: 'twice@example.com' } })).toBe(2);
    });

    it('never stores two rows for concurrent repeats', async () => {
      const body = { email: 'race@example.com', scenario: 'enterprise', company: 'Race Inc' };
      const results = await Promise.all(Array.from({ length: 6 }, () => call('post', '/api/leads', { body })));
      expect(results.map((r) => r.res.status)).toEqual([201, 201, 201, 201, 201, 201]);
      expect(await plaza.db.prisma.lead.count({ where: { email: 'race@example.com' } })).toBe(1);
    });

    it.each([
      ['a bad e-mail', { body: { email: 'not-an-email', scenario: 'growth' } }],
      ['a missing e-mail', { body: { scenario: 'growth' } }],
      ['an unknown scenario', { body: { email: 'a@example.com', scenario: 'gaming' } }],
      ['an oversize field', { body: { email: 'a@example.com', scenario: 'growth', company: 'c'.repeat(201) } }],
      ['an unknown field', { body: { email: 'a@example.com', scenario: 'growth', password: 'x' } }],
      ['a wrong type', { body: { email: 'a@example.com', scenario: 'growth', teamSize: 12 } }],
      [
        'a lone surrogate, which could only be stored altered',
        { raw: '{"email":"a@example.com","scenario":"growth","company":"\\ud800x"}' },
      ],
      ['malformed JSON', { raw: '{"email":' }],
      ['JSON null', { raw: 'null' }],
    ])('rejects %s with 400 invalid_lead and stores nothing', async (_what, init) => {
      const before = await plaza.db.prisma.lead.count();
      const { res, json } = await call('post', '/api/leads', init);
      expect(res.status).toBe(400);
      expect(json).toMatchObject({ success: false, code: 'invalid_lead' });
      expect(await plaza.db.prisma.lead.count()).toBe(before);
    });

    it('words a refusal in the language the page asked for, field names as the API spells them', async () => {
      const zh = await call('post', '/api/leads', {
        body: { email: 'nope', scenario: 'growth', extra: 1 },
        query: '?locale=zh-CN',
      });
      expect(zh.res.status).toBe(400);
      expect(zh.json.code).toBe('invalid_lead');
      expect(zh.json.message).toMatch(/^线索信息无效: email: /);
      expect(zh.json.details).toEqual([
        { path: 'email', message: expect.stringMatching(/\p{Script=Han}/u) },
        { path: '', message: '未知字段: extra' },
      ]);
      const blank = await call('post', '/api/agent/intent', {
        body: { prompt: '  ' },
        headers: { 'accept-language': 'zh-CN,zh;q=0.9' },
      });
      expect(blank.json).toMatchObject({
        code: 'invalid_prompt',
        details: [{ path: 'prompt', message: 'prompt 不能只有空白' }],
      });
      // Without a language preference, a Chinese prompt is refused in Chinese, as it is answered.
      const long = await call('post', '/api/agent/intent', { body: { prompt: '我想'.repeat(1_001) } });
      expect(long.json).toMatchObject({
        code: 'invalid_prompt',
        message: expect.stringMatching(/^意图请求无效: prompt: /),
      });
      // English stays the default.
      const en = await call('post', '/api/leads', { body: { email: 'nope', scenario: 'growth' } });
      expect(en.json.message).toBe('Invalid lead: email: Invalid email address');
    });
  });
});

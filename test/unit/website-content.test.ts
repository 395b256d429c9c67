/**
 * Pins the website catalog content in config/content: both locales load, describe the same
 * products, scenarios and plans, link every scenario to real products and a plan, and broken
 * content fails at start-up with a ContentError instead of serving nonsense.
 */
import { describe, expect, it } from 'vitest';

import { websiteContentSources } from '../../config/content/index.ts';
import { ContentError, loadWebsiteContent, LOCALES, SCENARIO_IDS } from '../../src/website/index.ts';

const load = (sources = websiteContentSources) => loadWebsiteContent({ sources, baseUrl: 'https://plaza.example' });
const clone = () => JSON.parse(JSON.stringify(websiteContentSources)) as Record<string, any>;

describe('website content', () => {
  const content = load();

  it.each(LOCALES)('serves the four scenarios, each linked to known products and a plan, in %s', (locale) => {
    const catalog = content.catalog(locale);
    expect(catalog.scenarios.map((s) => s.id)).toEqual([...SCENARIO_IDS]);
    const productNames = new Set(catalog.products.map((p) => p.name));
    const planIds = new Set(catalog.plans.map((p) => p.id));
    for (const scenario of catalog.scenarios) {
      expect(scenario.products.length).toBeGreaterThan(0);
      for (const product of scenario.products) expect(productNames).toContain(product);
      expect(planIds).toContain(scenario.planId);
    }
    for (const plan of catalog.plans) {
      expect(Number.isInteger(plan.priceCents)).toBe(true);
      expect(plan.features.length).toBeGreaterThan(2);
      expect(plan.checkoutUrl).toMatch(/^https:\/\/plaza\.example\//);
    }
    expect(catalog.manifesto.length).toBeGreaterThan(300);
    expect(JSON.stringify(catalog)).not.toMatch(/lorem|ipsum|TODO/i);
  });

  it('keeps ids and links identical across locales while the copy differs', () => {
    const en = content.catalog('en');
    const zh = content.catalog('zh-CN');
    expect(zh.scenarios.map((s) => [s.id, s.planId])).toEqual(en.scenarios.map((s) => [s.id, s.planId]));
    expect(zh.plans.map((p) => p.id)).toEqual(en.plans.map((p) => p.id));
    expect(zh.manifesto).not.toBe(en.manifesto);
    expect(zh.scenarios[0]!.headline).toMatch(/\p{Script=Han}/u);
  });

  it('rejects a scenario that names an unknown product', () => {
    const broken = clone();
    broken['zh-CN'].scenarios[0].products.push('nope');
    expect(() => load(broken)).toThrow(ContentError);
  });

  it('rejects locales that disagree on plan links', () => {
    const broken = clone();
    broken['zh-CN'].scenarios[1].planId = 'starter';
    expect(() => load(broken)).toThrow(/differ/);
  });

  it('rejects a missing locale and a malformed plan', () => {
    const missing = clone();
    delete missing['zh-CN'];
    expect(() => load(missing)).toThrow(/zh-CN/);
    const malformed = clone();
    malformed['en'].plans[0].priceCents = 9.99;
    expect(() => load(malformed)).toThrow(/priceCents/);
  });
});

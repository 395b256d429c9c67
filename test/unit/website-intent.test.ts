/**
 * Pins the intent classifier: English, Chinese and mixed prompts land on the scenario a person
 * would pick, weak prompts fall back to the default scenario, the answer explains the choice in the
 * requested locale, and classification stays a fast pure function (p99 CPU time under 5 ms).
 */
import { describe, expect, it } from 'vitest';

import { websiteContentSources } from '../../config/content/index.ts';
import {
  buildIntentIndex,
  classifyIntent,
  loadWebsiteContent,
  PROMPT_MAX_CHARS,
  recommendation,
} from '../../src/website/index.ts';

const content = loadWebsiteContent({ sources: websiteContentSources, baseUrl: 'https://plaza.example' });
const index = buildIntentIndex(content);

describe('classifyIntent', () => {
  it.each([
    ['We need an audit trail of which agent touched our ERP, for SOC 2 compliance', 'enterprise'],
    ['Our security team must revoke an agent in seconds and prove who accessed customer data', 'enterprise'],
    ['我们是一家银行，需要审计每个智能体的访问权限并满足合规要求', 'enterprise'],
    ['Let shopping agents handle orders, refunds and inventory in our Shopify store', 'commerce'],
    ['我们的网店想让智能体处理订单、库存和售后退款', 'commerce'],
    ['I want to publish my CLI tool as a package with a signed manifest', 'developer'],
    ['我想把我的开源命令行工具打包发布，让智能体可以安装', 'developer'],
    ['Automate our newsletter, SEO content and social media campaigns', 'growth'],
    ['帮我们的营销团队自动化获客和小红书内容投放', 'growth'],
    ['We run an online store and want 电商 agents to process 订单', 'commerce'],
  ])('classifies %j as %s', (prompt, expected) => {
    const result = classifyIntent(index, prompt);
    expect(result.matched).toBe(true);
    expect(result.scenarioId).toBe(expected);
    expect(result.ranking[0]!.scenarioId).toBe(expected);
    expect(result.terms.length).toBeGreaterThan(0);
  });

  it.each(['hello', 'asdf qwer', '你好', '12345', '!!!'])('falls back to the default scenario for %j', (prompt) => {
    const result = classifyIntent(index, prompt);
    expect(result.matched).toBe(false);
    expect(result.scenarioId).toBe(content.defaultScenario);
    expect(result.terms).toEqual([]);
  });

  it('ranks every scenario, best first, and is deterministic', () => {
    const prompt = 'audit our store orders';
    const a = classifyIntent(index, prompt);
    expect(a.ranking.map((r) => r.scenarioId).sort()).toEqual(['commerce', 'developer', 'enterprise', 'growth']);
    for (let i = 1; i < a.ranking.length; i++)
      expect(a.ranking[i - 1]!.score).toBeGreaterThanOrEqual(a.ranking[i]!.score);
    expect(classifyIntent(index, prompt)).toEqual(a);
  });
});

describe('recommendation', () => {
  it('explains the choice with the matched terms, in the requested locale', () => {
    const result = classifyIntent(index, 'We need SOC 2 compliance and an audit trail');
    const en = recommendation(content.catalog('en'), result);
    expect(en).toMatchObject({
      status: 'ok',
      locale: 'en',
      planId: 'enterprise',
      planName: 'Enterprise',
      nextActions: ['/api/leads', '/api/plans', '/api/scenarios'],
    });
    expect(en.answer).toContain('“audit”');
    expect(en.answer).toContain('Enterprise governance');
    const zh = recommendation(content.catalog('zh-CN'), result);
    expect(zh.answer).toContain('企业治理');
    expect(zh.recommendedProducts).toEqual(content.catalog('zh-CN').scenario('enterprise').productNames);
  });

  it('says so when it fell back', () => {
    const result = recommendation(content.catalog('en'), classifyIntent(index, 'hello'));
    expect(result.status).toBe('fallback');
    expect(result.answer).toMatch(/does not point to one scenario/);
  });
});

describe('classification speed', () => {
  it('keeps p99 under 5 ms even for maximum-length prompts', () => {
    const words =
      'our team wants agents to audit orders publish packages and run campaigns 我们 希望 自动化 订单 审计'.split(' ');
    const prompts = Array.from({ length: 300 }, (_, i) => {
      let text = '';
      while (text.length < (i % 3 === 0 ? PROMPT_MAX_CHARS - 20 : 200))
        text += `${words[(text.length + i) % words.length]} `;
      return text.slice(0, PROMPT_MAX_CHARS);
    });
    for (const p of prompts.slice(0, 30)) classifyIntent(index, p);
    // CPU time, best of three rounds: the machine is shared, and time spent descheduled is not
    // the classifier's (bench/ measures wall-clock latency under controlled load).
    const p99s = [0, 1, 2].map(() => {
      const times = prompts.map((p) => {
        const start = process.cpuUsage();
        classifyIntent(index, p);
        const used = process.cpuUsage(start);
        return (used.user + used.system) / 1000;
      });
      times.sort((a, b) => a - b);
      return times[Math.floor(times.length * 0.99)]!;
    });
    expect(Math.min(...p99s)).toBeLessThan(5);
  });
});

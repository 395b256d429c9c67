/** Pins the token API settings: defaults, upstream model lists and aliases, and errors naming the variable. */
import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../config/index.ts';
import { createModelRegistry } from '../../src/chat/index.ts';

describe('token API configuration', () => {
  it('defaults to the embedded assistant with documented limits', () => {
    const config = loadConfig({});
    expect(config.llm).toEqual({
      baseUrl: undefined,
      apiKey: undefined,
      models: [],
      aliases: {},
      timeoutMs: 30_000,
      completionTimeoutMs: 600_000,
      maxRetries: 1,
    });
    expect(config.tokenApi).toEqual({
      maxTokens: 4096,
      rpmPerSubject: 30,
      rpmPerIp: 120,
      tokensPerDayPerSubject: 200_000,
      tokensPerDayPerIp: 1_000_000,
      guestTokenRpmPerIp: 10,
    });
  });

  it('reads an upstream with models and aliases', () => {
    const config = loadConfig({
      LLM_BASE_URL: 'http://llm:8000/v1/',
      LLM_API_KEY: 'sk-x',
      LLM_MODELS: 'a, b',
      LLM_MODEL_ALIASES: 'fast=a,smart = b',
    });
    expect(config.llm).toMatchObject({
      baseUrl: 'http://llm:8000/v1',
      apiKey: 'sk-x',
      models: ['a', 'b'],
      aliases: { fast: 'a', smart: 'b' },
    });
  });

  it.each([
    ['LLM_MODEL_ALIASES', 'fast'],
    ['LLM_MODEL_ALIASES', 'a=b=c'],
    ['LLM_BASE_URL', 'ftp://llm'],
    ['LLM_TIMEOUT_MS', '5'],
    ['LLM_COMPLETION_TIMEOUT_MS', 'soon'],
    ['CHAT_MAX_TOKENS', '0'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      expect((error as ConfigError).variable).toBe(name);
    }
  });

  it('refuses upstream models without an upstream', () => {
    expect(() => createModelRegistry({ upstream: false, models: ['a'], aliases: {} })).toThrow(/LLM_BASE_URL/);
  });
});

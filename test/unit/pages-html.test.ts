/**
 * Pins the pages' HTML builder: interpolations are escaped (text and attributes), nested `html`
 * stays markup, arrays join, and JSON data blocks cannot close their script element.
 */
import { describe, expect, it } from 'vitest';

import type { Endpoint } from '../../src/marketplace/index.ts';
import { latencyChart } from '../../src/pages/chart.ts';
import { pageCopy } from '../../src/pages/copy.ts';
import { endpointBody } from '../../src/pages/endpoint.ts';
import { excerpt, html, jsonData } from '../../src/pages/html.ts';
import { marketplaceBody } from '../../src/pages/marketplace.ts';

describe('html', () => {
  it.each([
    ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    [`"onmouseover='x'`, '<p>&quot;onmouseover=&#39;x&#39;</p>'],
    ['a & b', '<p>a &amp; b</p>'],
  ])('escapes %s in text', (input, expected) => {
    expect(html`<p>${input}</p>`.value).toBe(expected);
  });

  it('escapes attribute values and keeps nested markup', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<a title="${'" onclick="x'}">${inner}</a>`.value).toBe(
      '<a title="&quot; onclick=&quot;x"><b>&lt;i&gt;</b></a>',
    );
  });

  it('joins arrays and drops null, undefined and false', () => {
    expect(html`${['a', html`<br>`, null, undefined, false, 0]}`.value).toBe('a<br>0');
  });
});

describe('jsonData', () => {
  it('cannot close the script element it sits in', () => {
    const out = jsonData({ text: '</script><script>alert(1)</script>', line: '\u2028' }).value;
    expect(out).not.toContain('</script');
    expect(JSON.parse(out)).toEqual({ text: '</script><script>alert(1)</script>', line: '\u2028' });
  });
});

describe('excerpt', () => {
  it.each([
    ['short and whole', 20, 'short and whole'],
    ['first line only\nsecond line', 40, 'first line only'],
    ['a description that goes on and on', 20, 'a description that…'],
    ['Supercalifragilisticexpialidocious', 10, 'Supercali…'],
    ['天气 预报 😀😀😀😀😀', 8, '天气 预报…'],
    ['😀😀😀😀😀', 3, '😀😀…'],
  ])('cuts %j to at most %i characters, saying so', (text, max, expected) => {
    expect(excerpt(text, max)).toBe(expected);
    expect(Array.from(excerpt(text, max)).length).toBeLessThanOrEqual(max);
  });
});

describe('latencyChart', () => {
  it('draws one bar per probe, oldest first, failed ones full height, and escapes error text', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, s));
    const svg = latencyChart(
      [
        {
          startedAt: at(2),
          ok: false,
          latencyMs: 5000,
          protocolVersion: null,
          serverInfo: null,
          toolCount: 0,
          error: '<timeout>',
        },
        {
          startedAt: at(1),
          ok: true,
          latencyMs: 50,
          protocolVersion: null,
          serverInfo: null,
          toolCount: 1,
          error: null,
        },
        {
          startedAt: at(0),
          ok: true,
          latencyMs: 100,
          protocolVersion: null,
          serverInfo: null,
          toolCount: 1,
          error: null,
        },
      ],
      'Latency',
      'table',
    ).value;
    const bars = [...svg.matchAll(/<rect [^>]*height="([\d.]+)" class="(bar-\w+)"/g)].map((m) => [Number(m[1]), m[2]]);
    expect(bars).toEqual([
      [92, 'bar-ok'],
      [46, 'bar-ok'],
      [92, 'bar-fail'],
    ]);
    expect(svg).toContain('&lt;timeout&gt;');
    expect(svg).not.toContain('<timeout>');
  });
});

describe('endpointBody', () => {
  const endpoint: Endpoint = {
    id: 'ep_1',
    provider: 'weather-co',
    url: 'https://weather.example/mcp',
    registeredBy: 'ops@example.com',
    accountId: null,
    source: 'manual',
    registryName: null,
    aginSupport: false,
    summary: 'Weather',
    audience: null,
    requiredCredentials: [],
    purpose: null,
    risk: null,
    aginLimits: null,
    status: 'unreachable',
    toolCount: 13,
    lastProbeAt: new Date(0),
    lastProbeOk: false,
    lastLatencyMs: null,
    lastError: 'refused',
    protocolVersions: ['2026-07-28', '2025-11-25'],
    capabilities: { tools: { listChanged: true }, resources: {} },
    nextProbeAt: new Date(0),
    createdAt: new Date(0),
  };

  it('says how many tools an endpoint had when none is online, in the page language', () => {
    expect(endpointBody(endpoint, [], [], pageCopy('en')).value).toContain(
      'None is online now; the last probe that reached this endpoint found 13.',
    );
    expect(endpointBody(endpoint, [], [], pageCopy('zh-CN')).value).toContain('发现 13 个');
    expect(endpointBody({ ...endpoint, toolCount: 0 }, [], [], pageCopy('en')).value).not.toContain('tools-offline');
  });

  it('shows the MCP revisions and capabilities the endpoint offers, or that no probe has said yet', () => {
    const page = endpointBody(endpoint, [], [], pageCopy('en')).value;
    expect(page).toContain('<dt>MCP revisions</dt><dd>MCP 2026-07-28, 2025-11-25</dd>');
    expect(page).toContain('<dt>MCP capabilities</dt><dd>tools, resources</dd>');
    const unknown = endpointBody(
      { ...endpoint, protocolVersions: [], capabilities: null },
      [],
      [],
      pageCopy('en'),
    ).value;
    expect(unknown).toContain('<dt>MCP revisions</dt><dd><span class="muted">not known yet</span></dd>');
    expect(unknown).not.toContain('MCP capabilities');
  });

  it('is listed in the marketplace table with a column of the MCP revisions it offers', () => {
    const page = marketplaceBody(
      { q: '', provider: '', tools: { items: [], nextCursor: null }, endpoints: [endpoint] },
      pageCopy('en'),
    ).value;
    expect(page).toContain('<th scope="col">MCP revisions</th>');
    expect(page).toContain('<td class="revisions" data-label="MCP revisions">MCP 2026-07-28, 2025-11-25</td>');
  });
});

describe('marketplaceBody', () => {
  it('links a later page of tools back to the first, keeping the search, and counts its own tools as more', () => {
    const later = marketplaceBody(
      { q: 'weather', provider: '', tools: { items: [], nextCursor: null }, endpoints: [], later: true },
      pageCopy('en'),
    ).value;
    expect(later).toContain('<a href="/marketplace?q=weather">← First results</a>');
    expect(later).toContain('0 more tools');
    const first = marketplaceBody(
      { q: '', provider: '', tools: { items: [], nextCursor: null }, endpoints: [] },
      pageCopy('en'),
    ).value;
    expect(first).not.toContain('First results');
  });
});

import type { Endpoint, ProbeRunRecord, Tool } from '../marketplace/index.ts';
import { aginLimitsText } from './agin-limits.ts';
import { latencyChart } from './chart.ts';
import { fill, type PageCopy } from './copy.ts';
import { excerpt, type Html, html } from './html.ts';
import { healthBadge, revisionsText } from './marketplace.ts';

/** One endpoint: its listing metadata, online tools, and probe history as chart and table. */
export function endpointBody(endpoint: Endpoint, probes: ProbeRunRecord[], tools: Tool[], copy: PageCopy): Html {
  const e = copy.endpoint;
  const m = copy.market;
  const row = (label: string, value: Html | string | null) =>
    value === null || value === '' ? '' : html`<dt>${label}</dt><dd>${value}</dd>`;
  return html`
<p><a href="/marketplace">← ${e.back}</a></p>
<h1>${endpoint.provider} ${healthBadge(endpoint.status, copy)}</h1>
<p class="break"><code>${endpoint.url}</code></p>
<dl class="facts" id="endpoint-facts" data-endpoint-id="${endpoint.id}">
  ${row(e.summary, endpoint.summary)}
  ${row(m.registrant, endpoint.registeredBy)}
  ${row(m.source, endpoint.source)}
  ${row(e.audience, endpoint.audience)}
  ${row(e.purpose, endpoint.purpose)}
  ${row(e.risk, endpoint.risk)}
  ${row(e.aginSupport, endpoint.aginSupport ? e.yes : e.no)}
  ${row(m.aginLimits, aginLimitsText(endpoint, copy))}
  ${row(m.credentials, endpoint.requiredCredentials.length === 0 ? m.noCredentials : html`${endpoint.requiredCredentials.map((c, i) => html`${i > 0 ? ', ' : ''}<code>${c.name}</code>${c.description ? html` (${c.description})` : ''}`)}`)}
  ${row(e.gateway, html`<code>/mcp/p/${endpoint.provider}</code>`)}
  ${row(m.revisions, revisionsText(endpoint, copy))}
  ${row(m.capabilities, endpoint.capabilities === null ? null : Object.keys(endpoint.capabilities).join(', '))}
</dl>
<section aria-labelledby="tools-title">
  <h2 id="tools-title">${m.tools} (${tools.length})</h2>
  ${tools.length === 0 && endpoint.toolCount > 0 ? html`<p class="muted" id="tools-offline">${fill(e.toolsOffline, { count: endpoint.toolCount })}</p>` : ''}
  <ul class="tools compact">
    ${tools.map((t) => html`<li><code>${t.name}</code> ${healthBadge(t.health, copy)} <span class="muted">${excerpt(t.description, 200)}</span></li>`)}
  </ul>
</section>
<section aria-labelledby="history-title">
  <h2 id="history-title">${e.history}</h2>
  ${
    probes.length === 0
      ? html`<p>${e.noProbes}</p>`
      : html`${latencyChart(probes, e.chartTitle, 'probe-table')}
  <div class="table-wrap"><table id="probe-table">
    <caption class="sr-only">${e.history}</caption>
    <thead><tr><th scope="col">${e.time}</th><th scope="col">${e.ok}</th><th scope="col">${e.latency}</th><th scope="col">${m.tools}</th><th scope="col">${e.error}</th></tr></thead>
    <tbody>
    ${probes.map(
      (p) =>
        html`<tr><td><time datetime="${p.startedAt.toISOString()}">${p.startedAt.toISOString().replace('T', ' ').slice(0, 19)}</time></td><td>${p.ok ? e.probeOk : e.probeFail}</td><td>${p.latencyMs} ms</td><td>${p.toolCount}</td><td class="break">${p.error ?? ''}</td></tr>`,
    )}
    </tbody>
  </table></div>`
  }
</section>
`;
}

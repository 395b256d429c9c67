import type { ProbeRunRecord } from '../marketplace/index.ts';
import { type Html, html } from './html.ts';

const WIDTH = 600;
const HEIGHT = 140;
const PAD = 24;

/**
 * A small inline-SVG bar chart of probe latencies, oldest left: green bars for good probes, red
 * full-height hatched bars for failed ones. Decorative for screen readers, who get the probe table
 * below it (`aria-describedby`-style pairing via the caption).
 */
export function latencyChart(probes: readonly ProbeRunRecord[], title: string, tableId: string): Html {
  const runs = [...probes].reverse();
  // Scaled to the good probes: a failed probe (often a long timeout) would flatten every other bar.
  const max = Math.max(1, ...runs.filter((p) => p.ok).map((p) => p.latencyMs));
  const slot = (WIDTH - PAD * 2) / Math.max(runs.length, 1);
  const bar = Math.max(2, Math.min(24, slot * 0.7));
  return html`<figure class="chart">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title" aria-details="${tableId}">
  <title id="chart-title">${title}</title>
  <line x1="${PAD}" y1="${HEIGHT - PAD}" x2="${WIDTH - PAD}" y2="${HEIGHT - PAD}" class="axis"></line>
  <text x="${PAD}" y="14" class="axis-label">${max} ms</text>
  ${runs.map((p, i) => {
    const x = PAD + i * slot + (slot - bar) / 2;
    const h = p.ok ? Math.max(2, ((HEIGHT - PAD * 2) * p.latencyMs) / max) : HEIGHT - PAD * 2;
    return html`<rect x="${x.toFixed(1)}" y="${(HEIGHT - PAD - h).toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" class="${p.ok ? 'bar-ok' : 'bar-fail'}"><title>${p.startedAt.toISOString()} — ${p.ok ? `${p.latencyMs} ms` : (p.error ?? 'failed')}</title></rect>`;
  })}
</svg>
<figcaption>${title}</figcaption>
</figure>`;
}

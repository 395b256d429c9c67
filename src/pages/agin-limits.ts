import type { Endpoint } from '../marketplace/index.ts';
import { fill, type PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/** The per-AGIN limits a provider declares on its listing (issue 35). */
type AginLimits = NonNullable<Endpoint['aginLimits']>;

/** The limits an endpoint's listing declares, or undefined when it declares none. */
function declaredLimits(endpoint: Endpoint | undefined): AginLimits | undefined {
  const limits = endpoint?.aginLimits;
  return limits && (limits.per_minute !== undefined || limits.per_day !== undefined) ? limits : undefined;
}

/** "10 calls per minute, 500 per day" (what Plaza holds every calling agent to), or '' for none. */
export function aginLimitsText(endpoint: Endpoint | undefined, copy: PageCopy): string {
  const limits = declaredLimits(endpoint);
  if (!limits) return '';
  const m = copy.market;
  return [
    limits.per_minute !== undefined ? fill(m.aginPerMinute, { n: limits.per_minute }) : '',
    limits.per_day !== undefined ? fill(m.aginPerDay, { n: limits.per_day }) : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** The note on a tool card: the provider's per-agent limits, enforced by Plaza; '' when none. */
export function aginLimitsNote(endpoint: Endpoint | undefined, copy: PageCopy): Html | '' {
  const text = aginLimitsText(endpoint, copy);
  return text ? html`<p class="small listing-limits"><strong>${copy.market.aginLimits}:</strong> ${text}</p>` : '';
}

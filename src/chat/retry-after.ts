/**
 * `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date, the latter in any of the three
 * forms §5.6.7 obliges a recipient to accept (IMF-fixdate, obsolete RFC 850 and asctime).
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
// Anchored, fixed-width fields and no nested repetition: linear whatever an upstream sends.
const IMF_FIXDATE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const RFC_850 = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;
/**
 * delta-seconds, leniently: some servers send fractions ("1.5", rounded up) or exponents; a value
 * too large for a number becomes a large one (RFC 9110 §1.2), for the caller to clamp.
 */
const DELTA_SECONDS = /^\d+(?:\.\d+)?(?:e\+?\d+)?$/i;

/**
 * The wait `header` asks for, in seconds from `nowMs` (0 for a date already past); undefined when
 * it is neither delta-seconds nor an HTTP-date. Not clamped: that is the caller's policy.
 */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (DELTA_SECONDS.test(value)) return Math.ceil(Math.min(Number(value), Number.MAX_SAFE_INTEGER));
  const at = value.length > 64 ? undefined : httpDate(value, nowMs);
  return at === undefined ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** An HTTP-date as epoch milliseconds, or undefined. */
function httpDate(value: string, nowMs: number): number | undefined {
  let match = IMF_FIXDATE.exec(value);
  if (match) return utc(match[3]!, match[2]!, match[1]!, match[4]!, match[5]!, match[6]!);
  match = RFC_850.exec(value);
  if (match) {
    // §5.6.7: a two-digit year more than 50 years in the future is in the past century.
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(match[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(String(year), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!);
  }
  match = ASCTIME.exec(value);
  if (match) return utc(match[6]!, match[1]!, match[2]!.trim(), match[3]!, match[4]!, match[5]!);
  return undefined;
}

function utc(
  year: string,
  month: string,
  day: string,
  hour: string,
  minute: string,
  second: string,
): number | undefined {
  const m = MONTHS.indexOf(month.toLowerCase());
  const [y, d, h, min, s] = [year, day, hour, minute, second].map(Number) as [number, number, number, number, number];
  if (m === -1 || d < 1 || d > 31 || h > 23 || min > 59 || s > 60) return undefined;
  const at = Date.UTC(y, m, d, h, min, s);
  // Date.UTC rolls 31 Feb over into March: such a date is no date.
  return new Date(at).getUTCDate() === d ? at : undefined;
}

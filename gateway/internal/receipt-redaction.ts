/**
 * What no receipt may hold: the caller's third-party credential (X-PLATFORM-Upstream-Authorization).
 * Every text a receipt is built from — a provider's messages, task ids, tool names, Plaza's own
 * words quoting them — passes here: `clip` where a text is cut to length (so no cut can leave a
 * piece of a credential behind), and `redactReceipt` once more on the finished receipt, right before
 * it is stored (receipt-sink's one store step), so no path that builds a receipt can skip it.
 */

/** Shortest credential part taken out of receipts: shorter ones would blank ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** What takes a credential's place in a receipt. */
export const CREDENTIAL_REMOVED = '[credential removed]';

/**
 * What a receipt must not hold of the caller's X-PLATFORM-Upstream-Authorization header: its value
 * and, past an auth scheme (`Bearer …`), the credential alone. Undefined without the header.
 */
export function callSecrets(header: string | string[] | undefined): string[] | undefined {
  const values = (Array.isArray(header) ? header : [header])
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim());
  const secrets = values
    .flatMap((v) => [v, v.replace(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*\s+/, '')])
    .filter((v) => v.length >= MIN_SECRET_LENGTH);
  // Longest first, so a whole value goes before the credential inside it.
  return secrets.length > 0 ? [...new Set(secrets)].sort((a, b) => b.length - a.length) : undefined;
}

const REGEXP_SYNTAX = /[\\^$.*+?()[\]{}|/-]/g;

/** One pattern per set of secrets (a call's receipt is built from several texts). */
const patterns = new WeakMap<readonly string[], RegExp>();

function patternOf(secrets: readonly string[]): RegExp {
  let pattern = patterns.get(secrets);
  if (pattern) return pattern;
  const forms = secrets.flatMap((secret) => {
    const bytes = Buffer.from(secret);
    return [secret, bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
  });
  // Longest first, so a whole value goes before the credential inside it.
  const alternatives = [...new Set(forms)]
    .sort((a, b) => b.length - a.length)
    .map((form) => form.replace(REGEXP_SYNTAX, '\\$&'));
  pattern = new RegExp(alternatives.join('|'), 'gi');
  patterns.set(secrets, pattern);
  return pattern;
}

/**
 * `text` with every secret replaced: as sent, in any letter case (a provider's message may
 * lower-case what it quotes), and base64-encoded (standard or URL-safe, with or without padding),
 * as providers echo a token in an error or a task id.
 */
export function withoutSecrets(text: string, secrets: readonly string[] | undefined): string {
  if (!secrets || secrets.length === 0) return text;
  return text.replace(patternOf(secrets), CREDENTIAL_REMOVED);
}

/** `text` without secrets, then cut to `max` characters: redacted before the cut, never after. */
export function clip(text: string, max: number, secrets: readonly string[] | undefined): string {
  return withoutSecrets(text, secrets).slice(0, max);
}

/** The text fields of a receipt that can hold words from outside Plaza (the caller's, the provider's). */
interface ReceiptTexts {
  tool: string;
  provider: string;
  outcome: string;
}

/**
 * `receipt` with no secret in any of its texts (tool, provider, outcome): the last step before a
 * receipt is stored. A field the redaction would empty keeps the marker (a receipt's tool and
 * provider are never empty).
 */
export function redactReceipt<R extends ReceiptTexts>(receipt: R, secrets: readonly string[] | undefined): R {
  if (!secrets || secrets.length === 0) return receipt;
  // Cut to what a receipt holds (receipts/input.ts): the marker may be longer than what it replaced.
  const tool = withoutSecrets(receipt.tool, secrets).slice(0, 300);
  const provider = withoutSecrets(receipt.provider, secrets).slice(0, 200);
  const outcome = withoutSecrets(receipt.outcome, secrets);
  if (tool === receipt.tool && provider === receipt.provider && outcome === receipt.outcome) return receipt;
  return { ...receipt, tool, provider, outcome };
}

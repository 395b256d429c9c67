/**
 * Near misses of the standard's field names in a package's JSON files: a typo the schemas would
 * ignore in silence (extra fields are allowed) is warned about, naming the field meant.
 */
import type { Problem } from './errors.ts';

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short names. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * Warns about a field the standard does not define whose name is a near miss of one it does
 * (`descripton`, `lifecyle`, `instal`, `timeout`): the schemas allow extra fields, so such a typo
 * would otherwise be ignored in silence — a hook that never runs, a default timeout.
 */
export function checkNearMisses(
  value: unknown,
  known: readonly string[],
  file: string,
  path: string,
  warnings: Problem[],
): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const lower = key.toLowerCase();
    const near = known.find(
      (k) =>
        k.toLowerCase() === lower ||
        (lower.length >= 3 && k.startsWith(lower)) ||
        (lower.length >= 4 && editDistance(lower, k.toLowerCase()) <= (k.length >= 8 ? 2 : 1)),
    );
    if (near)
      warnings.push({
        file,
        path: `${path}.${key}`,
        message: `unknown field "${key}" is ignored: did you mean "${near}"?`,
      });
  }
}

/** The property names a (sub)schema defines, when it lists them. */
export function knownFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties && typeof properties === 'object' ? Object.keys(properties) : [];
}

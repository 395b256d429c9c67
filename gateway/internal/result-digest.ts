/** The result digest a receipt records: sha256 of the result's canonical JSON. */
import { hash } from 'node:crypto';

import { rawJsonText } from './json-rpc.ts';

/**
 * JSON with every object's keys in UTF-16 code unit order (Array.prototype.sort's own order for
 * strings) and undefined members left out; built in one string, without arrays of entries.
 */
function canonical(value: unknown): string {
  const raw = rawJsonText(value);
  if (raw !== undefined) return raw;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonical(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    let out = '{';
    for (const key of Object.keys(object).sort()) {
      const member = object[key];
      if (member === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonical(member)}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 hex of the canonical JSON of a result (keys sorted), so digests do not depend on key order. */
export function resultDigest(value: unknown): string {
  return hash('sha256', canonical(value), 'hex');
}

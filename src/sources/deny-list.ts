import { readFileSync } from 'node:fs';

import { z } from 'zod';

/** A known-bad digest and why it is listed. */
export interface DenyEntry {
  sha256: string;
  reason: string;
}

/**
 * Built-in known-bad digests. The EICAR anti-virus test file is here so the check is exercised
 * end to end without shipping real malware; operators add their own with PLAZA_SOURCES_DENYLIST_FILE.
 */
export const BUILTIN_DENY_LIST: readonly DenyEntry[] = [
  { sha256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', reason: 'EICAR anti-virus test file' },
];

const FileSchema = z.array(
  z.strictObject({ sha256: z.string().regex(/^[0-9a-fA-F]{64}$/), reason: z.string().min(1).max(500) }),
);

/** The deny-list as a digest → reason map: the built-in entries plus those of `file`, if given. */
export function loadDenyList(file: string | undefined): Map<string, string> {
  const map = new Map(BUILTIN_DENY_LIST.map((e) => [e.sha256, e.reason]));
  if (file === undefined) return map;
  const parsed = FileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `PLAZA_SOURCES_DENYLIST_FILE ${file}: expected a JSON array of {sha256, reason}: ${parsed.error.issues[0]?.message ?? ''}`,
    );
  for (const e of parsed.data) map.set(e.sha256.toLowerCase(), e.reason);
  return map;
}

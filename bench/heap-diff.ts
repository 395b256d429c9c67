/**
 * Compares two V8 heap snapshots (e.g. the soak's, BENCH_SOAK_SNAPSHOTS=120,540): objects counted
 * and their own bytes summed by constructor name (by node type for strings, code, closures…), and
 * the groups that grew most between the two printed first.
 * Run: `node --import tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]`.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per group: `Name` for objects, `(type) name` for closures, `(type)` for the rest. */
export function groups(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? '?';
    const name = snap.strings[snap.nodes[i + nameAt]!] ?? '?';
    const key =
      type === 'object' || type === 'native'
        ? name
        : type === 'closure'
          ? `(closure) ${name || '(anonymous)'}`
          : `(${type})`;
    const g = out.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += snap.nodes[i + sizeAt]!;
    out.set(key, g);
  }
  return out;
}

if (import.meta.main) {
  const [beforeFile, afterFile, rowsArg] = process.argv.slice(2);
  if (!beforeFile || !afterFile) throw new Error('usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]');
  const before = groups(beforeFile);
  const after = groups(afterFile);
  const total = (m: Map<string, { count: number; bytes: number }>) =>
    [...m.values()].reduce((a, g) => ({ count: a.count + g.count, bytes: a.bytes + g.bytes }), { count: 0, bytes: 0 });
  const [tb, ta] = [total(before), total(after)];
  console.log(
    `objects ${tb.count} → ${ta.count}, self size ${(tb.bytes / 2 ** 20).toFixed(1)} → ${(ta.bytes / 2 ** 20).toFixed(1)} MB`,
  );
  const keys = new Set([...before.keys(), ...after.keys()]);
  const diff = [...keys].map((key) => {
    const b = before.get(key) ?? { count: 0, bytes: 0 };
    const a = after.get(key) ?? { count: 0, bytes: 0 };
    return {
      group: key.slice(0, 60),
      count_before: b.count,
      count_after: a.count,
      count_delta: a.count - b.count,
      kb_delta: Math.round((a.bytes - b.bytes) / 1024),
    };
  });
  diff.sort((x, y) => y.kb_delta - x.kb_delta || y.count_delta - x.count_delta);
  console.table(diff.slice(0, Number(rowsArg ?? 30)));
}

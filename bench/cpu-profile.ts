/**
 * A V8 `.cpuprofile` summarised over a load window: busy µs per unit of work (a call, a
 * completion) by module and by function. Used by bench/profile-gateway.ts and bench/profile-chat.ts.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Prints busy µs per unit over the last `windowMs` of samples before the process's final idle
 * stretch (the profile's clock is its own, so the window is found from its end).
 */
export function summariseCpuProfile(label: string, profile: CpuProfile, windowMs: number, units: number): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const times: number[] = [];
  let t = 0;
  for (const d of profile.timeDeltas) times.push((t += d));
  // The load window ends at the last non-idle sample the load produced; shutdown is a few ms.
  let end = profile.samples.length - 1;
  while (end > 0 && nodes.get(profile.samples[end]!)!.callFrame.functionName === '(idle)') end--;
  const from = times[end]! - windowMs * 1000;
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i <= end; i++) {
    if (times[i]! < from) continue;
    const frame = nodes.get(profile.samples[i]!)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    busy += delta;
    const module = moduleOf(frame.url, frame.functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + delta);
    const name = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
  }
  const perUnit = (us: number) => (us / units).toFixed(1).padStart(7);
  console.log(`${label}: ${units} in ${windowMs} ms, busy ${perUnit(busy)} µs each`);
  console.log('by module (µs each):');
  for (const [k, v] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${perUnit(v)}  ${k}`);
  console.log('by function (µs each):');
  for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${perUnit(v)}  ${k}`);
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\/.*?\/node_modules\//, 'nm/')
    .replace(/^file:\/\/.*?\/(gateway|receipts|src|bench)\//, '$1/');
}

function moduleOf(url: string, functionName: string): string {
  if (!url) return functionName || '(native)';
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return `nm:${dependency[1]}`;
  if (url.startsWith('node:')) return url.split('/').slice(0, 3).join('/');
  return shortUrl(url).split('/').slice(0, 2).join('/');
}

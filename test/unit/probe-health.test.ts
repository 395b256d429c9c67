/**
 * Pins the endpoint health state machine (hysteresis: one blip never flaps a listing; repeated
 * failures hide it; recovery goes through degraded) and the adaptive probe schedule (demand sooner,
 * idle later, failures back off, bounded, jittered).
 */
import { describe, expect, it } from 'vitest';

import {
  type EndpointStatus,
  type HealthState,
  nextHealth,
  nextProbeDelayMs,
  type ProbeVerdict,
} from '../../probes/index.ts';

const good: ProbeVerdict = { ok: true, toolCount: 3, slow: false };
const slow: ProbeVerdict = { ok: true, toolCount: 3, slow: true };
const fail: ProbeVerdict = { ok: false, toolCount: 0, slow: false };
const empty: ProbeVerdict = { ok: true, toolCount: 0, slow: false };

function run(start: EndpointStatus, verdicts: ProbeVerdict[]): EndpointStatus[] {
  let state: HealthState = { status: start, consecutiveFailures: 0, consecutiveSuccesses: 0 };
  return verdicts.map((v) => (state = nextHealth(state, v)).status);
}

describe('nextHealth', () => {
  it('turns a registered endpoint healthy when it answers with tools', () => {
    expect(run('registered', [good])).toEqual(['healthy']);
  });

  it('keeps an endpoint that answers without tools a registered candidate', () => {
    expect(run('registered', [empty])).toEqual(['registered']);
    expect(run('healthy', [empty])).toEqual(['registered']);
  });

  it('ignores a single failure, degrades on the second, hides on the fourth', () => {
    expect(run('healthy', [fail, good])).toEqual(['healthy', 'healthy']);
    expect(run('healthy', [fail, fail, fail, fail])).toEqual(['healthy', 'degraded', 'degraded', 'unreachable']);
  });

  it('degrades on slow answers but never hides an endpoint that answers', () => {
    expect(run('healthy', [slow, slow, slow, slow, slow])).toEqual([
      'healthy',
      'degraded',
      'degraded',
      'degraded',
      'degraded',
    ]);
    // Hidden only after four failures in a row since its last (slow) answer, as for any endpoint.
    expect(run('healthy', [slow, slow, slow, fail, fail, fail, fail])).toEqual([
      'healthy',
      'degraded',
      'degraded',
      'degraded',
      'degraded',
      'degraded',
      'unreachable',
    ]);
    expect(run('degraded', [fail, fail, slow, fail, fail, fail, fail])).toEqual([
      'degraded',
      'degraded',
      'degraded',
      'degraded',
      'degraded',
      'degraded',
      'unreachable',
    ]);
  });

  it('brings an unreachable endpoint back online as degraded, then healthy', () => {
    expect(run('unreachable', [good, good])).toEqual(['degraded', 'healthy']);
    expect(run('degraded', [good, fail, good, good])).toEqual(['degraded', 'degraded', 'degraded', 'healthy']);
  });

  it('marks an endpoint that asks for a credential auth_required at once, and online again once it answers without', () => {
    const gated: ProbeVerdict = { ok: false, toolCount: 0, slow: false, authRequired: true };
    expect(run('registered', [gated, gated, gated, gated, gated])).toEqual([
      'auth_required',
      'auth_required',
      'auth_required',
      'auth_required',
      'auth_required',
    ]);
    // Online with tools, it keeps them through a blip, as through failures.
    expect(run('healthy', [gated, good])).toEqual(['healthy', 'healthy']);
    expect(run('healthy', [gated, gated, gated, gated])).toEqual(['healthy', 'degraded', 'degraded', 'auth_required']);
    expect(run('unreachable', [gated])).toEqual(['auth_required']);
    // A failure after it is counted from there, as for any endpoint that stopped answering.
    expect(run('auth_required', [fail, fail, fail, fail])).toEqual([
      'auth_required',
      'auth_required',
      'auth_required',
      'unreachable',
    ]);
  });

  it('marks a never-answering registered endpoint unreachable after repeated failures', () => {
    expect(run('registered', [fail, fail, fail, fail])).toEqual([
      'registered',
      'registered',
      'registered',
      'unreachable',
    ]);
  });
});

describe('nextProbeDelayMs', () => {
  const policy = { baseMs: 300_000, jitter: 0 };
  const state = (over: Partial<HealthState & { demandScore: number }>) => ({
    status: 'healthy' as EndpointStatus,
    consecutiveFailures: 0,
    consecutiveSuccesses: 1,
    demandScore: 0,
    ...over,
  });

  it('probes idle endpoints at twice the base and busy ones more often', () => {
    expect(nextProbeDelayMs(state({}), policy)).toBe(600_000);
    expect(nextProbeDelayMs(state({ demandScore: 1 }), policy)).toBe(150_000);
    expect(nextProbeDelayMs(state({ demandScore: 1_000_000 }), policy)).toBe(37_500);
  });

  it('backs failing endpoints off exponentially up to eight times the base', () => {
    const delays = [1, 2, 3, 4, 5, 6, 20].map((f) => nextProbeDelayMs(state({ consecutiveFailures: f }), policy));
    expect(delays).toEqual([75_000, 150_000, 300_000, 600_000, 1_200_000, 2_400_000, 2_400_000]);
  });

  it('adds bounded jitter', () => {
    const low = nextProbeDelayMs(state({}), { baseMs: 300_000, jitter: 0.2 }, () => 0);
    const high = nextProbeDelayMs(state({}), { baseMs: 300_000, jitter: 0.2 }, () => 1);
    expect([low, high]).toEqual([480_000, 720_000]);
  });
});

import {
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

import type { CallContext, CallReceipt } from './receipt-sink.ts';

/** Instrumentation scope of the gateway's spans and metrics. */
export const GATEWAY_TELEMETRY_SCOPE = 'plaza-gateway';
/** Name of the span every tools/call through the gateway produces. */
export const CALL_SPAN_NAME = 'mcp.tools/call';
/** Metric names: calls by provider/outcome/path, whole-call and upstream latency in ms. */
export const CALL_METRICS = {
  calls: 'plaza.gateway.calls',
  duration: 'plaza.gateway.call.duration',
  upstreamDuration: 'plaza.gateway.upstream.duration',
} as const;

/** Which gateway entry point carried the call. */
export type GatewayPath = 'aggregate' | 'passthrough';

interface CallTrace {
  span: Span;
  path: GatewayPath;
  started: number;
  upstreamStarted?: number;
}

const traces = new WeakMap<CallContext, CallTrace>();

let instruments: { provider: MeterProvider; calls: Counter; duration: Histogram; upstream: Histogram } | undefined;

/** The metric instruments of the current global meter provider (it is set when telemetry starts, possibly after this module loads). */
function meters() {
  const provider = metrics.getMeterProvider();
  if (instruments?.provider !== provider) {
    const meter = provider.getMeter(GATEWAY_TELEMETRY_SCOPE);
    instruments = {
      provider,
      calls: meter.createCounter(CALL_METRICS.calls, { description: 'tools/call requests through the MCP gateway' }),
      duration: meter.createHistogram(CALL_METRICS.duration, {
        unit: 'ms',
        description: 'Whole tools/call latency through the gateway, receipt included',
      }),
      upstream: meter.createHistogram(CALL_METRICS.upstreamDuration, {
        unit: 'ms',
        description: 'Time from sending a tools/call upstream to its result or failure',
      }),
    };
  }
  return instruments;
}

/**
 * Opens the call's span (`mcp.tools/call`, a child of the inbound request's span). Only
 * identifiers go on it: never arguments, results or credentials.
 */
export function traceCall(call: CallContext, path: GatewayPath): void {
  const span = trace.getTracer(GATEWAY_TELEMETRY_SCOPE).startSpan(CALL_SPAN_NAME, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'mcp.method.name': 'tools/call',
      'plaza.gateway.path': path,
      'plaza.provider': call.provider,
      'plaza.tool': call.tool,
      'plaza.agent.id': call.identity.agentId,
      'plaza.agin_id': call.identity.aginId,
      'plaza.call_id': call.callId,
    },
  });
  traces.set(call, { span, path, started: performance.now() });
}

/** Marks the moment the call goes upstream (upstream latency runs from here to the result). */
export function traceUpstreamStart(call: CallContext): void {
  const t = traces.get(call);
  if (t && t.upstreamStarted === undefined) t.upstreamStarted = performance.now();
}

/**
 * Closes the call's span with its outcome and receipt, and counts it. `recorded` is false when
 * the receipt could be stored nowhere (the call is then answered as an error).
 */
export function traceCallEnd(call: CallContext, receipt: CallReceipt, recorded: boolean): void {
  const t = traces.get(call);
  if (!t) return;
  traces.delete(call);
  const now = performance.now();
  const upstreamMs = t.upstreamStarted === undefined ? undefined : now - t.upstreamStarted;
  const outcome = recorded ? receipt.status : 'error';
  t.span.setAttributes({
    'plaza.outcome': outcome,
    'plaza.receipt.id': receipt.callId,
    'plaza.receipt.recorded': recorded,
    'plaza.call.latency_ms': receipt.latencyMs,
    ...(upstreamMs === undefined ? {} : { 'plaza.upstream.latency_ms': Math.round(upstreamMs * 1000) / 1000 }),
  });
  if (outcome === 'error')
    t.span.setStatus({
      code: SpanStatusCode.ERROR,
      message: recorded ? receipt.outcome : 'receipt could not be recorded',
    });
  t.span.end();
  const labels: Attributes = {
    'plaza.provider': call.provider,
    'plaza.outcome': outcome,
    'plaza.gateway.path': t.path,
  };
  const m = meters();
  m.calls.add(1, labels);
  m.duration.record(now - t.started, labels);
  if (upstreamMs !== undefined) m.upstream.record(upstreamMs, labels);
}

import { register } from 'node:module';

import type { SpanProcessor } from '@opentelemetry/sdk-trace';

import { getNodeAutoInstrumentations } from './instrumentations.ts';

/** Telemetry settings (from Config). */
export interface TelemetryOptions {
  enabled: boolean;
  otlpEndpoint: string | undefined;
  serviceName: string;
}

/** A started telemetry pipeline. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry: registers the ESM instrumentation hook (must run before the app's modules
 * load), then the Node SDK with HTTP, Express and Prisma instrumentation. Spans go to OTLP at
 * `otlpEndpoint`, or to `spanProcessors` when given (tests use an in-memory exporter).
 */
export async function startTelemetry(
  options: TelemetryOptions,
  extra: { spanProcessors?: SpanProcessor[] } = {},
): Promise<Telemetry> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace');
  const spanProcessors = extra.spanProcessors ?? [
    new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${options.otlpEndpoint?.replace(/\/+$/, '')}/v1/traces` }) }),
  ];
  const sdk = new NodeSDK({ serviceName: options.serviceName, spanProcessors, instrumentations: await getNodeAutoInstrumentations() });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

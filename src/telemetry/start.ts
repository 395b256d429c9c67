import { register } from 'node:module';

import type { IMetricReader } from '@opentelemetry/sdk-metrics';
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
 * `otlpEndpoint`, or to `spanProcessors` when given (tests use an in-memory exporter); metrics
 * (the gateway's call counter and latency histograms) go to OTLP every 30 s, or to `metricReaders`.
 */
export async function startTelemetry(
  options: TelemetryOptions,
  extra: { spanProcessors?: SpanProcessor[]; metricReaders?: IMetricReader[] } = {},
): Promise<Telemetry> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace');
  const spanProcessors = extra.spanProcessors ?? [
    new BatchSpanProcessor({
      exporter: new OTLPTraceExporter({ url: `${options.otlpEndpoint?.replace(/\/+$/, '')}/v1/traces` }),
    }),
  ];
  let metricReaders = extra.metricReaders;
  if (!metricReaders && options.otlpEndpoint) {
    const { PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    metricReaders = [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${options.otlpEndpoint.replace(/\/+$/, '')}/v1/metrics` }),
        exportIntervalMillis: 30_000,
      }),
    ];
  }
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors,
    metricReaders,
    instrumentations: await getNodeAutoInstrumentations(),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

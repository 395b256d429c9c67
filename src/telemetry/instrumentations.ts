import type { Instrumentation } from '@opentelemetry/instrumentation';

/** The instrumentations Plaza turns on: inbound/outbound HTTP, Express routing, Prisma queries. */
export async function getNodeAutoInstrumentations(): Promise<Instrumentation[]> {
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = await import('@opentelemetry/instrumentation-express');
  const { PrismaInstrumentation } = await import('@prisma/instrumentation');
  return [
    new HttpInstrumentation({
      // Credentials never become span attributes.
      headersToSpanAttributes: { server: { requestHeaders: ['x-request-id'] } },
    }),
    new ExpressInstrumentation(),
    new PrismaInstrumentation(),
  ];
}

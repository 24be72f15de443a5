import { register } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { setTraceReader } from './log-context.ts';

// OpenTelemetry traces, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (see src/telemetry.ts).
// The SDK reads the standard variables itself: OTEL_EXPORTER_OTLP_ENDPOINT (or the _TRACES_ one),
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf by default, http/json, grpc), OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_SCHEDULE_DELAY.

/**
 * Starts tracing. It must run before the app's modules are imported: node:http is patched in
 * place, and pg and ioredis (CommonJS packages imported from ESM) are patched through the
 * import-in-the-middle hook registered here. Fastify reports through its diagnostics channel and
 * undici through its own, so neither needs a hook.
 */
export function startTracing(): NodeSDK {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || 'tollbook',
    instrumentations: [
      new HttpInstrumentation(),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  setTraceReader(() => {
    const context = trace.getActiveSpan()?.spanContext();
    if (context === undefined || !isSpanContextValid(context)) return undefined;
    return { trace_id: context.traceId, span_id: context.spanId };
  });
  return sdk;
}

// Tracing's entry point, loaded before the app: `node --import ./dist/telemetry.js dist/main.js`,
// or `tsx --import ./src/telemetry.ts src/main.ts` in development. It is opt-in by the standard
// OTEL_EXPORTER_OTLP_ENDPOINT variable; without it nothing of OpenTelemetry is imported.

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  const { startTracing } = await import('./platform/telemetry/tracing.ts');
  startTracing();
}

// The trace and span ids of the current request for the logs. Tracing, when it is on, installs
// the reader at start-up; when it is off, no OpenTelemetry module is loaded and the logger's
// mixin answers nothing, at the cost of one function call per line.

export type TraceIds = { trace_id: string; span_id: string };

let reader: (() => TraceIds | undefined) | undefined;

export function setTraceReader(read: () => TraceIds | undefined): void {
  reader = read;
}

/** A pino mixin: the active span's ids, or no fields. */
export function traceFields(): Partial<TraceIds> {
  return reader?.() ?? {};
}

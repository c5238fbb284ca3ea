-- The trace of the request that wrote a callback (W3C traceparent/tracestate as JSON; null when
-- tracing is off), so its delivery joins that trace (src/callbacks/deliver.ts).
ALTER TABLE callback_outbox ADD COLUMN trace_context text;

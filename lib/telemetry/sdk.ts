import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';
import type * as SdkNode from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { traceIdOf } from '../http/trace.ts';
import type { TracingConfig } from './config.ts';
import { setTracing, type Tracing } from './state.ts';

/**
 * Loaded with `require`, synchronously, and only here: the SDK must be running before the
 * modules it instruments are evaluated, and an awaited `import()` in a preload module does not
 * hold back the entry point's other static imports (ES modules evaluate the next sibling while
 * one awaits). These packages ship CommonJS builds, so `require` costs nothing when tracing is
 * off: nothing is required at all.
 */
const require = createRequire(import.meta.url);

/** Probes and scrapes would each make a trace of one span, every few seconds. */
const OPERATIONS_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const isOperationsPath = (url: string | undefined) => OPERATIONS_PATHS.has((url ?? '').split('?')[0] ?? '');

export interface StartTracingOptions extends TracingConfig {
  /** Replaces the OTLP exporter (tests pass an in-memory one). */
  spanProcessors?: SpanProcessor[];
}

/**
 * Starts the OpenTelemetry SDK: traces only (metrics stay on /metrics, logs on stdout), over
 * OTLP/HTTP protobuf to OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, sampled as OTEL_TRACES_SAMPLER says
 * (default: parent-based, always on), propagated as W3C Trace Context and Baggage.
 */
export function startTracing(opts: StartTracingOptions): Tracing {
  const api = require('@opentelemetry/api') as typeof Api;
  const { startNodeSdk } = require('@opentelemetry/sdk-node') as typeof SdkNode;
  const sdk = startNodeSdk({
    resourceAttributes: { 'service.name': opts.serviceName },
    spanProcessors: opts.spanProcessors ?? [otlpProcessor()],
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: instrumentations(),
  });
  // ioredis's instrumentation patches the package's main module, which a `require` hook sees
  // but an ES `import` of a CommonJS package does not. Requiring it once here, patched, puts it
  // in the CommonJS cache, and lib/redis.ts's `import` then gets that same patched module.
  require('ioredis');

  const tracer = api.trace.getTracer('agent-commerce');
  const tracing: Tracing = {
    enabled: true,
    eventContext() {
      const carrier: Record<string, string> = {};
      api.propagation.inject(api.context.active(), carrier);
      // The extension defines these two; baggage (the other propagator) stays out of events.
      const { traceparent, tracestate } = carrier;
      return { ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) };
    },
    consume(event, handle) {
      // An event from outside any trace (a start-up reload, a script) would make a root trace of
      // one span per handler and replica: like pg and Redis outside a request, not traced.
      if (!event.traceparent) return handle();
      const parent = api.propagation.extract(api.ROOT_CONTEXT, {
        traceparent: event.traceparent,
        tracestate: event.tracestate,
      });
      return tracer.startActiveSpan(
        `process ${event.type}`,
        {
          kind: api.SpanKind.CONSUMER,
          attributes: {
            'messaging.operation.type': 'process',
            'messaging.message.id': event.id,
            'cloudevents.event_id': event.id,
            'cloudevents.event_source': event.source,
            'cloudevents.event_type': event.type,
          },
        },
        parent,
        async (span) => {
          try {
            return await handle();
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: api.SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    shutdown: () => sdk.shutdown(),
  };
  setTracing(tracing);
  return tracing;
}

function otlpProcessor(): SpanProcessor {
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  // Bounded: beyond 2048 waiting spans, new ones are dropped rather than held.
  return new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), maxQueueSize: 2048 });
}

function instrumentations() {
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { GraphQLInstrumentation } =
    require('@opentelemetry/instrumentation-graphql') as typeof import('@opentelemetry/instrumentation-graphql');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { FastifyOtelInstrumentation } = require('@fastify/otel') as typeof import('@fastify/otel');
  return [
    // The server span of every request: it reads the caller's traceparent.
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => isOperationsPath(req.url) }),
    // undici (the gateway's and the edge's calls to subgraphs, webhook deliveries):
    // client spans, and the traceparent the next hop continues.
    new UndiciInstrumentation(),
    // Fastify's request and route handler under the server span. The client's X-Trace-Id goes
    // on the request span, so a trace can be found by the id a caller was given. No span per
    // hook: each request runs a dozen, named after their plugin's source text, which buried the
    // handler, the subgraph calls and the queries in a trace.
    new FastifyOtelInstrumentation({
      registerOnInitialization: true,
      instrumentHooks: false,
      ignorePaths: (route) => isOperationsPath(route.url),
      requestHook: (span, request) => span.setAttribute('app.x_trace_id', traceIdOf(request.headers)),
      lifecycleHook: (span, info) => {
        if (info.hookName === 'handler') span.updateName(`handler ${info.request.routeOptions.url ?? ''}`);
      },
    }),
    // Parse, validate, execute and the root fields' resolvers; a span per nested field would
    // be one per line and per price of a quote.
    new GraphQLInstrumentation({ mergeItems: true, ignoreTrivialResolveSpans: true, depth: 1 }),
    // Background work (the audit writer, the event stream reader) would make a root trace per
    // query; only queries made while serving a request are traced.
    new PgInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
  ];
}

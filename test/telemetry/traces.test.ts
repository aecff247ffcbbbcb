/**
 * Traces across hops, over the distributed topology: pricing, promotions and procurement subgraph
 * servers and the distributed gateway, each on its own port, talking over real HTTP, on real
 * Postgres and Redis. They run in this one process so one in-memory exporter sees every span
 * (separate processes would each need an OTLP receiver); the hops are still real sockets, and
 * each server's span is told apart by its port.
 *
 * The SDK starts first; everything it instruments (fastify, http, graphql, pg, ioredis) is
 * imported after it, as lib/telemetry/preload.ts arranges for the real entry points.
 */
import { randomBytes } from 'node:crypto';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CloudEvent } from '../../lib/events/cloudevent.ts';
import { startTracing } from '../../lib/telemetry/sdk.ts';

const exporter = new InMemorySpanExporter();
const tracing = startTracing({
  serviceName: 'agent-commerce-test',
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
});

const { buildSubgraphServer } = await import('../../lib/graphql/serve-subgraph.ts');
const { buildDistributedGateway } = await import('../../gateway/topology.ts');
const { subgraphFactories } = await import('../../gateway/subgraphs.ts');
const { createProcurementSubgraph } = await import('../../subgraphs/procurement/index.ts');
const { testConfig } = await import('../../harness/system.ts');
const { mintDevToken } = await import('../../lib/auth/jwt.ts');
const { freshPostgres, TEST_REDIS_URL, uniquePrefix } = await import('../../harness/services.ts');
const { Redis } = await import('ioredis');
const { tenLines } = await import('../edge/support.ts');

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const newTraceparent = () => {
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};

/** HTTP from the test itself, untraced: the traceparent sent is exactly the one written here. */
function send(url: string, init: RequestInit = {}): Promise<Response> {
  return context.with(suppressTracing(context.active()), () => fetch(url, init));
}

const portOf = (url: string) => Number(new URL(url).port);
const spansOf = (traceId: string) =>
  exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
/** The HTTP server spans of the process listening on `port`. */
const serverSpansOn = (spans: ReadableSpan[], port: number) =>
  spans.filter(
    (s) =>
      s.kind === SpanKind.SERVER &&
      s.instrumentationScope.name === '@opentelemetry/instrumentation-http' &&
      s.attributes['server.port'] === port,
  );
const serverSpan = (spans: ReadableSpan[], port: number, path: string) =>
  serverSpansOn(spans, port).find((s) =>
    String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? '').startsWith(path),
  );
const clientSpansTo = (spans: ReadableSpan[], port: number) =>
  spans.filter(
    (s) =>
      s.kind === SpanKind.CLIENT &&
      s.instrumentationScope.name === '@opentelemetry/instrumentation-undici' &&
      s.attributes['server.port'] === port,
  );
/** Whether `span` descends from `ancestor` through its parent links. */
function descends(spans: ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  let at: ReadableSpan | undefined = span;
  for (let hops = 0; at && hops < 100; hops++) {
    const parent: string | undefined = at.parentSpanContext?.spanId;
    if (parent === ancestor.spanContext().spanId) return true;
    at = parent ? byId.get(parent) : undefined;
  }
  return false;
}

const QUOTE = `query Quote($input: CartQuoteInput!) {
  cartQuote(input: $input) { subtotal lines { sku unitPrice } promotions { total } quoteToken }
}`;
const SET_BASE_PRICE = `mutation SetBasePrice($input: SetBasePriceInput!) {
  setBasePrice(input: $input) { sku currency amount }
}`;

describe('OpenTelemetry traces across the distributed topology', () => {
  type Subgraph = Awaited<ReturnType<typeof buildSubgraphServer>>;
  const subgraphs: Record<string, { server: Subgraph; url: string }> = {};
  let gateway: Awaited<ReturnType<typeof buildDistributedGateway>>;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let env: Record<string, string>;
  const redis = new Redis(TEST_REDIS_URL);

  beforeAll(async () => {
    pg = await freshPostgres('otel');
    env = {
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('otel'),
      GATEWAY_SHARED_SECRET: 'otel-suite-secret-0123456789abcdef',
      PRICE_CACHE_MAX_ENTRIES: '0',
    };
    const config = testConfig(env);
    // One DATA_DIR for all: the development signing keys are shared, as on one machine.
    env.DATA_DIR = config.DATA_DIR;
    for (const name of ['pricing', 'promotions', 'procurement'] as const) {
      // As subgraphs/procurement/main.ts: the order domain's internal HTTP door for the gateway.
      const factory =
        name === 'procurement'
          ? (platform: Parameters<typeof createProcurementSubgraph>[0]) =>
              createProcurementSubgraph(platform, { internalHttp: true })
          : subgraphFactories[name];
      const server = await buildSubgraphServer(name, factory, config);
      const url = await server.app.listen({ port: 0, host: '127.0.0.1' });
      subgraphs[name] = { server, url };
    }
    gateway = await buildDistributedGateway(
      testConfig({
        ...env,
        PRICING_URL: subgraphs.pricing?.url ?? '',
        PROMOTIONS_URL: subgraphs.promotions?.url ?? '',
        PROCUREMENT_URL: subgraphs.procurement?.url ?? '',
      }),
    );
    await gateway.listen(0);
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    for (const s of Object.values(subgraphs)) await s.server.close();
    await pg?.drop();
    redis.disconnect();
    await tracing.shutdown();
  });

  beforeEach(() => exporter.reset());

  it('gives one GraphQL cart quote one trace: gateway server span, its subgraph fetches, the subgraphs’ server spans', async () => {
    const tp = newTraceparent();
    const cart = {
      lines: tenLines().map(({ sku, quantity }) => ({ sku, quantity })),
      currency: 'USD',
      region: 'EU',
    };
    const res = await send(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: tp.header },
      body: JSON.stringify({ query: QUOTE, variables: { input: cart } }),
    });
    const body = (await res.json()) as { data?: { cartQuote?: { lines: unknown[] } }; errors?: unknown };
    expect(res.status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data?.cartQuote?.lines).toHaveLength(10);
    expect(res.headers.get('x-trace-id')).toBe(tp.traceId);

    const pricingPort = portOf(subgraphs.pricing?.url ?? '');
    const promotionsPort = portOf(subgraphs.promotions?.url ?? '');
    // A server span ends when its response has been written, just after the client has it: the
    // gateway's, and each subgraph's (which may end after the gateway has answered, on a busy machine).
    const spans = await vi.waitFor(() => {
      const s = spansOf(tp.traceId);
      expect(serverSpan(s, portOf(gateway.url), '/graphql')).toBeDefined();
      for (const port of [pricingPort, promotionsPort])
        expect(serverSpansOn(s, port).length).toBeGreaterThanOrEqual(clientSpansTo(s, port).length);
      return s;
    });

    // Nothing else was traced meanwhile: every span of the quote is in the caller's trace.
    expect(new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId))).toEqual(
      new Set([tp.traceId]),
    );

    const root = serverSpan(spans, portOf(gateway.url), '/graphql');
    expect(root?.parentSpanContext?.spanId).toBe(tp.parentId);
    for (const port of [pricingPort, promotionsPort]) {
      const fetches = clientSpansTo(spans, port);
      expect(fetches.length).toBeGreaterThan(0);
      const served = serverSpansOn(spans, port);
      expect(served.length).toBe(fetches.length);
      for (const fetchSpan of fetches) {
        expect(descends(spans, fetchSpan, root as ReadableSpan)).toBe(true);
        // Each subgraph server span is the child of the gateway's fetch that called it.
        const child = served.filter((s) => s.parentSpanContext?.spanId === fetchSpan.spanContext().spanId);
        expect(child).toHaveLength(1);
      }
    }

    // What else the quote's trace holds: fastify routes, GraphQL execution, Postgres and Redis.
    const scopes = new Set(spans.map((s) => s.instrumentationScope.name));
    for (const scope of [
      '@fastify/otel',
      '@opentelemetry/instrumentation-graphql',
      '@opentelemetry/instrumentation-pg',
      '@opentelemetry/instrumentation-ioredis',
    ]) {
      expect(scopes).toContain(scope);
    }
    const services = new Set(spans.map((s) => s.resource.attributes['service.name']));
    expect(services).toEqual(new Set(['agent-commerce-test']));
  });

  const ENTRY_POINTS = [
    {
      name: 'gateway GraphQL',
      at: 'gateway',
      method: 'POST',
      path: '/graphql',
      body: { query: '{ __typename }' },
    },
    {
      name: 'edge REST quote',
      at: 'gateway',
      method: 'GET',
      path: '/cart/quote?line=nope:1&currency=USD&region=EU',
    },
    { name: 'agent route (edge form)', at: 'gateway', method: 'POST', path: '/v2/orders', body: {} },
    {
      name: 'agent route (spec form)',
      at: 'gateway',
      method: 'POST',
      path: '/api/v2/procurement/orders',
      body: {},
    },
    {
      name: 'pricing REST',
      at: 'pricing',
      method: 'POST',
      path: '/v1/prices/calculate',
      body: { sku: 'nope', currency: 'USD', region: 'EU', customerSegment: 'STANDARD', inventoryLevel: 50 },
    },
    { name: 'promotions REST', at: 'promotions', method: 'POST', path: '/v1/promotions/evaluate', body: {} },
    {
      name: 'subgraph GraphQL',
      at: 'procurement',
      method: 'POST',
      path: '/graphql',
      body: { query: '{ __typename }' },
    },
  ] as const;

  it.each(ENTRY_POINTS)(
    'returns a traceparent’s trace id as X-Trace-Id and continues it: $name',
    async (entry) => {
      const base = entry.at === 'gateway' ? gateway.url : (subgraphs[entry.at]?.url ?? '');
      const tp = newTraceparent();
      const res = await send(`${base}${entry.path}`, {
        method: entry.method,
        headers: {
          traceparent: tp.header,
          ...('body' in entry ? { 'content-type': 'application/json' } : {}),
        },
        ...('body' in entry ? { body: JSON.stringify(entry.body) } : {}),
      });
      await res.arrayBuffer();
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get('x-trace-id')).toBe(tp.traceId);
      const span = await vi.waitFor(() => {
        const s = serverSpan(spansOf(tp.traceId), portOf(base), entry.path.split('?')[0] ?? '');
        expect(s).toBeDefined();
        return s as ReadableSpan;
      });
      expect(span.parentSpanContext?.spanId).toBe(tp.parentId);
      expect(span.parentSpanContext?.isRemote).toBe(true);
    },
  );

  it('keeps a caller’s own X-Trace-Id, and puts it on the request span of the traceparent’s trace', async () => {
    const tp = newTraceparent();
    const res = await send(`${gateway.url}/cart/quote?line=nope:1&currency=USD&region=EU`, {
      headers: { traceparent: tp.header, 'x-trace-id': 'caller-label-7' },
    });
    await res.arrayBuffer();
    expect(res.headers.get('x-trace-id')).toBe('caller-label-7');
    const request = await vi.waitFor(() => {
      const s = spansOf(tp.traceId).find(
        (x) => x.instrumentationScope.name === '@fastify/otel' && x.name === 'request',
      );
      expect(s).toBeDefined();
      return s as ReadableSpan;
    });
    expect(request.attributes['app.x_trace_id']).toBe('caller-label-7');
  });

  it('ignores an invalid traceparent: unknown-trace, and a new trace rather than an error', async () => {
    const zeros = `00-${'0'.repeat(32)}-${hex(8)}-01`;
    const res = await send(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: zeros },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-trace-id')).toBe('unknown-trace');
    const span = await vi.waitFor(() => {
      const s = serverSpan(exporter.getFinishedSpans(), portOf(gateway.url), '/graphql');
      expect(s).toBeDefined();
      return s as ReadableSpan;
    });
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceId).not.toBe('0'.repeat(32));
  });

  it('puts the traceparent on an event published while handling a request, and its consumers continue the trace', async () => {
    const tp = newTraceparent();
    const sku = tenLines()[0]?.sku ?? '';
    const token = await mintDevToken(testConfig(env), { subject: 'ops', roles: ['pricing:admin'] });
    const stream = `${env.REDIS_KEY_PREFIX}events`;
    const before =
      ((await redis.xrevrange(stream, '+', '-', 'COUNT', 1)) as [string, string[]][])[0]?.[0] ?? '0-0';

    const res = await send(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        traceparent: tp.header,
      },
      body: JSON.stringify({
        query: SET_BASE_PRICE,
        variables: { input: { sku, currency: 'USD', amount: 12.34 } },
      }),
    });
    const body = (await res.json()) as { errors?: unknown };
    expect(body.errors).toBeUndefined();

    // The CloudEvent as it sits on the Redis Stream.
    const entries = (await redis.xrange(stream, `(${before}`, '+')) as [string, string[]][];
    const events = entries.map(([, fields]) => JSON.parse(fields[1] ?? '{}') as CloudEvent);
    const changed = events.find((e) => e.type === 'com.agent-commerce.pricing.BasePriceChanged');
    expect(changed?.traceparent).toMatch(new RegExp(`^00-${tp.traceId}-[0-9a-f]{16}-01$`));
    const publisherSpanId = changed?.traceparent?.split('-')[2];
    // The publishing span is one of the request's spans, inside the pricing subgraph's server span.
    const spans = await vi.waitFor(() => {
      const s = spansOf(tp.traceId);
      expect(s.some((x) => x.spanContext().spanId === publisherSpanId)).toBe(true);
      return s;
    });
    const pricingServer = serverSpan(spans, portOf(subgraphs.pricing?.url ?? ''), '/graphql');
    const publisher = spans.find((x) => x.spanContext().spanId === publisherSpanId) as ReadableSpan;
    expect(descends(spans, publisher, pricingServer as ReadableSpan)).toBe(true);

    // Every process reading the stream (the gateway's edge and pricing subscribe to it) handles
    // the event in a consumer span whose parent is the publishing span.
    const consumers = await vi.waitFor(() => {
      const c = spansOf(tp.traceId).filter(
        (x) => x.kind === SpanKind.CONSUMER && x.name === `process ${changed?.type}`,
      );
      expect(c.length).toBeGreaterThanOrEqual(2);
      return c;
    });
    for (const c of consumers) {
      expect(c.parentSpanContext?.spanId).toBe(publisherSpanId);
      expect(c.attributes['cloudevents.event_id']).toBe(changed?.id);
    }
  });

  it('keeps the traceparent of an agent order on its OrderPlaced event, relayed later from the outbox', async () => {
    const tp = newTraceparent();
    const stream = `${env.REDIS_KEY_PREFIX}events`;
    const res = await send(`${gateway.url}/api/v2/procurement/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-spiffe-id': 'spiffe://example.org/ns/ai/sa/procurement-agent/otel',
        traceparent: tp.header,
      },
      body: JSON.stringify({
        agent_id: 'agent-0000001',
        sku: 'SKU-ELC-000001',
        quantity: 1,
        max_budget_usd: 10,
      }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { order_id } = (await res.json()) as { order_id: string };
    // The relay publishes after the commit: wait for the event of this order on the stream.
    const placed = await vi.waitFor(async () => {
      const entries = (await redis.xrange(stream, '-', '+')) as [string, string[]][];
      const e = entries
        .map(([, fields]) => JSON.parse(fields[1] ?? '{}') as CloudEvent)
        .find((x) => x.type === 'com.agent-commerce.procurement.OrderPlaced' && x.subject === order_id);
      expect(e).toBeDefined();
      return e as CloudEvent;
    });
    expect(placed.traceparent).toMatch(new RegExp(`^00-${tp.traceId}-[0-9a-f]{16}-01$`));
    // Its parent is a span of the order's request in the procurement subgraph.
    const spans = await vi.waitFor(() => {
      const s = spansOf(tp.traceId);
      expect(s.some((x) => x.spanContext().spanId === placed.traceparent?.split('-')[2])).toBe(true);
      return s;
    });
    const procurementServer = spans.find(
      (x) =>
        x.kind === SpanKind.SERVER &&
        x.attributes['server.port'] === portOf(subgraphs.procurement?.url ?? ''),
    );
    expect(procurementServer).toBeDefined();
  });

  it('puts only the trace context on an event: none outside a trace, no baggage inside one', async () => {
    const { cloudEvent } = await import('../../lib/events/cloudevent.ts');
    const outside = context.with(trace.deleteSpan(context.active()), () => cloudEvent('/test', 'x', {}));
    expect(outside.traceparent).toBeUndefined();
    const inside = trace.getTracer('test').startActiveSpan('publish', (span) => {
      const e = cloudEvent('/test', 'x', {});
      span.end();
      return { e, traceId: span.spanContext().traceId };
    });
    expect(inside.e.traceparent?.split('-')[1]).toBe(inside.traceId);
    // Baggage (the other default propagator) is no CloudEvents attribute.
    const withBaggage = propagation.setBaggage(
      context.active(),
      propagation.createBaggage({ tenant: { value: 'acme' } }),
    );
    const e = trace.getTracer('test').startActiveSpan('publish', {}, withBaggage, (span) => {
      span.end();
      return cloudEvent('/test', 'x', {});
    });
    expect(Object.keys(e).sort()).toEqual(
      ['data', 'datacontenttype', 'id', 'source', 'specversion', 'time', 'traceparent', 'type'].sort(),
    );
  });

  it('runs a handler in a consumer span only for an event that carries a trace', async () => {
    const { HandlerSet } = await import('../../lib/events/bus.ts');
    const { cloudEvent } = await import('../../lib/events/cloudevent.ts');
    const handlers = new HandlerSet((err) => {
      throw err;
    });
    const seen: (string | undefined)[] = [];
    handlers.add('x', () => {
      seen.push(trace.getActiveSpan()?.spanContext().traceId);
    });
    const tp = newTraceparent();
    await handlers.dispatch({ ...cloudEvent('/test', 'x', {}), traceparent: tp.header });
    await handlers.dispatch(
      context.with(trace.deleteSpan(context.active()), () => cloudEvent('/test', 'x', {})),
    );
    expect(seen).toEqual([tp.traceId, undefined]);
    const consumers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CONSUMER);
    expect(consumers).toHaveLength(1);
    expect(consumers[0]?.parentSpanContext?.spanId).toBe(tp.parentId);
  });
});

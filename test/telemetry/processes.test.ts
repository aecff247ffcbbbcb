/**
 * Tracing in real service processes, started the way an operator starts them: off (nothing of
 * OpenTelemetry loaded) without an OTLP endpoint, and with one, spans of every instrumented
 * layer exported over OTLP/HTTP to a receiver this test runs, flushed on SIGTERM. The preload
 * module is what makes the real entry points work (ES modules evaluate their imports in order),
 * so this is where that order is proven; test/telemetry/traces.test.ts starts the SDK itself.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/**
 * Which OpenTelemetry packages a process has loaded once the subgraph server stack is imported,
 * but the API, which Apollo's packages load for themselves whether anyone traces or not.
 */
async function loadedOtelPackages(env: Record<string, string>): Promise<string[]> {
  const script = `
    import { createRequire } from 'node:module';
    await import('./lib/telemetry/preload.ts');
    await import('./lib/graphql/serve-subgraph.ts');
    await import('./lib/events/redis-streams.ts');
    const loaded = Object.keys(createRequire(import.meta.url).cache)
      .map((f) => /node_modules\\/(@opentelemetry\\/[^/]+|@fastify\\/otel)\\//.exec(f)?.[1])
      .filter((p) => p && p !== '@opentelemetry/api');
    console.log(JSON.stringify([...new Set(loaded)].sort()));
    process.exit(0);`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
}

describe('tracing off', () => {
  it('loads nothing of OpenTelemetry without an OTLP endpoint (and loads it with one)', async () => {
    expect(await loadedOtelPackages({})).toEqual([]);
    expect(
      await loadedOtelPackages({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_SDK_DISABLED: 'true',
      }),
    ).toEqual([]);
    const on = await loadedOtelPackages({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(on).toEqual(
      expect.arrayContaining([
        '@opentelemetry/sdk-node',
        '@opentelemetry/instrumentation-pg',
        '@fastify/otel',
      ]),
    );
  }, 60_000);

  it('stops with exit code 2 and the variable’s name on an endpoint that is not a URL', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'subgraphs/pricing/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
  }, 60_000);
});

describe('tracing on, in a real subgraph process', () => {
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  let receiver: Server;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;

  beforeAll(async () => {
    // An OTLP/HTTP endpoint: keeps each export request's protobuf body.
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          bodies.push(Buffer.concat(chunks));
          contentTypes.push(String(req.headers['content-type']));
        }
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    pg = await freshPostgres('otelproc');
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
    await pg?.drop();
  });

  /** Starts pricing exporting to the receiver, sends it one price request with a traceparent, stops it. */
  async function tracedPriceCall(env: Record<string, string> = {}) {
    bodies.length = 0;
    contentTypes.length = 0;
    const pricing = await startProcess('pricing', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('otelproc'),
      CATALOG_SIZE: '500',
      ...env,
    });
    const traceId = randomBytes(16).toString('hex');
    try {
      const res = await fetch(`${pricing.url}/v1/prices/calculate`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
        body: JSON.stringify({
          sku: 'SKU-ABC-000001',
          currency: 'USD',
          region: 'EU',
          customerSegment: 'VIP',
          inventoryLevel: 5,
        }),
      });
      await res.arrayBuffer();
      // SIGTERM: the process flushes its span queue before it exits.
      return {
        traceId,
        status: res.status,
        xTraceId: res.headers.get('x-trace-id'),
        exit: await pricing.stop(),
      };
    } finally {
      await pricing.kill();
    }
  }

  it('exports the request’s spans over OTLP, in the caller’s trace, from http, fastify, Redis and Postgres', async () => {
    const call = await tracedPriceCall();
    expect(call).toMatchObject({ status: 200, xTraceId: call.traceId, exit: 0 });
    expect(contentTypes.length).toBeGreaterThan(0);
    expect(contentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
    const exported = Buffer.concat(bodies);
    // Protobuf keeps ids as raw bytes and names as UTF-8: enough to find them without a decoder.
    expect(exported.includes(Buffer.from(call.traceId, 'hex'))).toBe(true);
    for (const name of [
      'agent-commerce-pricing',
      '@opentelemetry/instrumentation-http',
      '@fastify/otel',
      '@opentelemetry/instrumentation-ioredis',
      '@opentelemetry/instrumentation-pg',
    ]) {
      expect(exported.includes(Buffer.from(name)), name).toBe(true);
    }
  }, 120_000);

  it('samples as OTEL_TRACES_SAMPLER says: always_off exports nothing, and X-Trace-Id is unchanged', async () => {
    const call = await tracedPriceCall({ OTEL_TRACES_SAMPLER: 'always_off' });
    expect(call).toMatchObject({ status: 200, xTraceId: call.traceId, exit: 0 });
    expect(Buffer.concat(bodies).includes(Buffer.from(call.traceId, 'hex'))).toBe(false);
  }, 120_000);
});

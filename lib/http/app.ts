import { readFileSync } from 'node:fs';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { Gauge, Histogram } from 'prom-client';
import type { Platform } from '../platform.ts';
import { Problem, sendProblem } from '../problem.ts';
import { tracing } from '../telemetry/state.ts';
import { type AcceptHandles, addAcceptHandles } from './accept.ts';
import { decorateRehearsals, type Rehearsals } from './rehearsal.ts';
import { registerShedding, type SheddingOptions } from './shed.ts';
import { traceIdOf } from './trace.ts';

declare module 'fastify' {
  interface FastifyRequest {
    traceId: string;
  }
  interface FastifyInstance {
    /**
     * Answers the router's refusals (frameworkProblem) of paths under `prefix` with `send`
     * instead of the server-wide problem: a protocol with its own error shape (UCP's
     * `{code, content}`) keeps it for paths the router cannot read.
     */
    answerRouterRefusals(prefix: string, send: RouterRefusalAnswer): void;
  }
}

export type RouterRefusalAnswer = (problem: Problem, req: FastifyRequest, reply: FastifyReply) => unknown;

/** The router's refusals (Fastify's frameworkErrors) as problems. */
export function frameworkProblem(code: string): Problem {
  if (code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new Problem(414, 'uri-too-long', 'URI too long', 'a path parameter is longer than 100 characters');
  return new Problem(400, 'malformed-request', 'Malformed request', 'the request path cannot be decoded');
}

/**
 * One HTTP server per process, shared by GraphQL, REST adapters and operations endpoints:
 * `/healthz` (the process lives), `/readyz` (its dependencies answer), `/metrics`.
 */
export function createHttpApp(
  platform: Platform,
  opts: { bodyLimit?: number; shed?: SheddingOptions['classify'] } = {},
): FastifyInstance {
  const refusals: { prefix: string; send: RouterRefusalAnswer }[] = [];
  const app = Fastify({
    loggerInstance: platform.log as FastifyBaseLogger,
    // Per-request log lines cost more than the requests themselves at these rates; errors
    // and audits are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimit ?? 1_048_576,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Slow clients (slow headers, a body trickled byte by byte) are cut off with 408 instead of
    // holding a connection for ever: Fastify's default requestTimeout of 0 means no limit.
    requestTimeout: platform.config.HTTP_REQUEST_TIMEOUT_MS,
    http: slowClientLimits(platform.config),
    // A path the router cannot read (a parameter over its 100 characters, bad percent-encoding)
    // is refused before any route: with a problem body like every other refusal, not Fastify's,
    // or in the shape of the protocol that owns the path (answerRouterRefusals).
    frameworkErrors: (err, req, reply) => {
      const problem = frameworkProblem(err.code);
      const path = req.url.split('?', 1)[0] ?? '';
      const own = refusals.find((r) => path === r.prefix || path.startsWith(`${r.prefix}/`));
      return own ? own.send(problem, req, reply) : sendProblem(reply, problem);
    },
    ...tlsOptions(platform.config),
  }) as unknown as FastifyInstance;

  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    registers: [platform.metrics],
  });

  app.decorate('answerRouterRefusals', (prefix: string, send: RouterRefusalAnswer) => {
    refusals.push({ prefix: prefix.replace(/\/+$/, ''), send });
  });
  const rehearsals = decorateRehearsals(app);
  // Bounded waiting at the edge (issue 48): registered before any route, so its onRequest hook
  // runs first on every route; the warm-up's own requests are never shed.
  if (opts.shed) registerShedding(app, sheddingOf(platform, opts.shed, rehearsals));
  app.decorateRequest('traceId', '');
  app.addHook('onRequest', async (req, reply) => {
    req.traceId = traceIdOf(req.headers);
    reply.header('x-trace-id', req.traceId);
  });
  app.addHook('onResponse', async (req, reply) => {
    duration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: reply.statusCode },
      reply.elapsedTime / 1000,
    );
  });

  acceptWide(app, platform);

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    let ok = true;
    await Promise.all(
      [...platform.readiness].map(async ([name, check]) => {
        try {
          await Promise.race([
            check(),
            new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000)),
          ]);
          checks[name] = 'ok';
        } catch (err) {
          ok = false;
          checks[name] = err instanceof Error ? err.message : 'failed';
        }
      }),
    );
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not-ready', checks });
  });
  app.get('/metrics', async (_req, reply) =>
    reply.type(platform.metrics.contentType).send(await platform.metrics.metrics()),
  );
  return app;
}

/**
 * Once listening, ACCEPT_HANDLES more descriptors of the listening socket accept into the server
 * (lib/http/accept.ts: on Node 20 one descriptor accepts one connection per turn of the loop).
 * Ready waits for them, so a replica is not sent traffic before it can take a burst of new
 * connections; they stop accepting as soon as the server starts closing.
 */
function acceptWide(app: FastifyInstance, platform: Platform): void {
  const count = platform.config.ACCEPT_HANDLES;
  if (count === 0) return;
  const gauge = new Gauge({
    name: 'http_accept_handles',
    help: "Descriptors of the listening socket accepting connections, the server's own included",
    registers: [platform.metrics],
  });
  let handles: Promise<AcceptHandles> | undefined;
  app.addHook('onListen', async () => {
    handles ??= addAcceptHandles(app.server, count, {
      onError: (err) => platform.log.warn({ err }, 'extra accept handles: accepting on one descriptor'),
    }).then((h) => {
      gauge.set(h.count + 1);
      return h;
    });
    await handles;
  });
  platform.readiness.set('accept', async () => {
    if (!app.server.listening) return;
    await handles;
  });
  app.addHook('preClose', async () => {
    (await handles)?.close();
  });
}

/**
 * Node checks these limits every connectionsCheckingInterval (30 s by default, too coarse for
 * limits of seconds): check each second, or twice per headers limit when that is shorter.
 */
function slowClientLimits(c: Platform['config']) {
  const requestTimeout = c.HTTP_REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(c.HTTP_HEADERS_TIMEOUT_MS, requestTimeout);
  return {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 2))),
  };
}

/**
 * Mutual TLS when TLS_CERT_FILE and TLS_KEY_FILE are set: clients present a certificate of
 * TLS_CA_FILE (the SPIFFE trust bundle); the agent gateway takes its identity from it.
 */
function tlsOptions(c: Platform['config']) {
  if (!c.TLS_CERT_FILE || !c.TLS_KEY_FILE) return {};
  return {
    https: {
      cert: readFileSync(c.TLS_CERT_FILE),
      key: readFileSync(c.TLS_KEY_FILE),
      ...(c.TLS_CA_FILE ? { ca: readFileSync(c.TLS_CA_FILE) } : {}),
      ...slowClientLimits(c),
      requestCert: true,
      rejectUnauthorized: c.TLS_CLIENT_CERT === 'required',
      minVersion: c.TLS_MIN_VERSION,
    },
  };
}

/**
 * The last spans (this drain's requests) go out before the process exits; a collector that
 * does not answer costs at most 2 s of the shutdown, not the exporter's 30 s timeout.
 */
async function flushTraces(platform: Platform): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, 2000);
  });
  try {
    await Promise.race([tracing().shutdown(), timeout]);
  } catch (err) {
    platform.log.warn({ err }, 'exporting the last traces failed');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SIGTERM/SIGINT, in this order: readiness turns false (/readyz answers 503 `draining`, so a
 * load balancer stops sending) while the process keeps serving for SHUTDOWN_DELAY_MS; then it
 * stops accepting, lets in-flight requests finish (an order is durable before its 201), writes
 * what is buffered (the audit queue, the spans not yet exported) and closes its connections (platform.close, in reverse
 * order of opening). Exit 0; exit 1 if that takes longer than SHUTDOWN_TIMEOUT_MS.
 */
export function closeOnSignals(app: FastifyInstance, platform: Platform): void {
  let closing = false;
  const stop = async (signal: string) => {
    if (closing) return;
    closing = true;
    const { SHUTDOWN_DELAY_MS: delay, SHUTDOWN_TIMEOUT_MS: timeout } = platform.config;
    platform.log.info({ signal, delayMs: delay }, 'shutting down');
    platform.readiness.set('lifecycle', async () => {
      throw new Error('draining');
    });
    const force = setTimeout(() => {
      platform.log.error({ timeoutMs: timeout }, 'shutdown took too long; exiting');
      process.exit(1);
    }, timeout);
    force.unref();
    try {
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      await app.close();
      await platform.close();
      await flushTraces(platform);
      platform.log.info('stopped');
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** The edge's shedding from the configuration (SHED_* in lib/config.ts). */
function sheddingOf(
  platform: Platform,
  classify: SheddingOptions['classify'],
  rehearsals: Rehearsals,
): SheddingOptions {
  const c = platform.config;
  return {
    budgetsMs: { quote: c.SHED_QUOTE_BUDGET_MS, order: c.SHED_ORDER_BUDGET_MS },
    concurrency: { quote: c.SHED_QUOTE_CONCURRENCY, order: c.SHED_ORDER_CONCURRENCY },
    sampleMs: c.SHED_SAMPLE_MS,
    busyStretch: c.SHED_BUSY_STRETCH,
    ...(c.SHED_ADAPTIVE_CLASSES.length > 0
      ? {
          adaptive: {
            classes: c.SHED_ADAPTIVE_CLASSES,
            min: c.SHED_LIMIT_MIN,
            tolerance: c.SHED_LIMIT_TOLERANCE,
            budgetFactor: c.SHED_BUDGET_FACTOR,
            budgetFloorMs: c.SHED_BUDGET_FLOOR_MS,
            // A window of the loop's sample (the shedding's reaction time), and enough answers
            // for its median and p10 to mean something: an order window is longer.
            windowMs: c.SHED_SAMPLE_MS,
            minSamples: 20,
          },
        }
      : {}),
    retryAfterSeconds: c.SHED_RETRY_AFTER_SECONDS,
    classify,
    // Nothing is shed while the warm-up runs: the loop is late with the process's own warm-up
    // then, and no load balancer sends to a process that is not ready; a direct caller (an
    // operator, a script) waits for the warm-up instead of a 503 it could not help.
    exempt: () => rehearsals.warming(),
    metrics: platform.metrics,
  };
}

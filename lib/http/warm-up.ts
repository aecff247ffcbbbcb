import { once } from 'node:events';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Pool } from 'undici';
import type { Config } from '../config.ts';
import type { Platform } from '../platform.ts';
import { parseV8Flags, withV8Flags } from './warm-up-v8.ts';

/**
 * Ready means warm (issue 29, docs/performance.md "Warm start"), for every process: the
 * embedded system and the distributed gateway (gateway/warm-up.ts) and each subgraph process
 * (lib/graphql/serve-subgraph.ts). Until its warm-up has run, /readyz answers 503 `warming up`
 * (/healthz 200 throughout), so a load balancer or a Service sends nothing to a process that
 * would meet traffic with code V8 still interprets, empty caches and connections not yet open.
 */
export interface WarmUpReport {
  readonly ms: number;
  readonly requests: number;
  /** Requests that did not answer 2xx (e.g. an empty catalog): reported, never fatal. */
  readonly failed: number;
  /** The first few of them, `METHOD path status`, so the log says what broke. */
  readonly failures?: readonly string[];
}

/** A warm-up request's answer. */
export interface WarmUpAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * Requests that depend on each other's answers (a checkout session created, updated, then
 * completed by its id): `run` sends them in turn through `send`, which counts each as the
 * warm-up counts any request.
 */
export interface WarmUpFlow {
  /** Its first request: the flow is left out where this process does not serve that route. */
  readonly first: InjectOptions;
  run(n: number, send: (request: InjectOptions) => Promise<WarmUpAnswer>): Promise<void>;
}

/** One of the warm-up's kinds of request: a request made from n, or a flow. */
export type WarmUpSend = ((n: number) => InjectOptions) | WarmUpFlow;

/** How many failed warm-up requests the report names. */
const FAILURES_NAMED = 5;

/** How many SQL connections the warm-up opens: the Postgres pool's size (lib/db/postgres.ts). */
const SQL_CONNECTIONS = 10;

/**
 * Opens what the first requests would otherwise open under load: the SQL pool's connections
 * (Postgres opens them on demand, a TCP connect and an authentication each, so the first burst
 * of orders queued behind them) and a round trip on the Redis connection.
 */
export async function openConnections(platform: Platform): Promise<void> {
  await Promise.all([
    ...Array.from({ length: SQL_CONNECTIONS }, () => platform.db.ping()),
    platform.redis?.ping(),
  ]);
}

/**
 * The process's own plain-HTTP origin on loopback once it listens (within `waitMs`), or
 * undefined: not listening in time, a Unix socket, or TLS (a loopback caller would need a
 * client certificate for mutual TLS), where the warm-up uses inject instead.
 */
async function loopbackOrigin(app: FastifyInstance, waitMs: number): Promise<string | undefined> {
  const server = app.server;
  if (server instanceof TlsServer) return undefined;
  if (!server.listening) {
    const timer = new AbortController();
    const gave = setTimeout(() => timer.abort(), Math.max(0, waitMs));
    try {
      await once(server, 'listening', { signal: timer.signal });
    } catch {
      return undefined;
    } finally {
      clearTimeout(gave);
    }
  }
  const a = server.address();
  if (a === null || typeof a === 'string') return undefined;
  const host =
    a.family === 'IPv6'
      ? a.address === '::'
        ? '[::1]'
        : `[${a.address}]`
      : a.address === '0.0.0.0'
        ? '127.0.0.1'
        : a.address;
  return `http://${host}:${a.port}`;
}

/**
 * Sends the kinds of request in lanes (one per kind at least, `concurrency` lanes at least, spread
 * over the kinds in turn), one request at a time per lane as callers come, until `deadline`
 * (performance.now()); a request whose route this process does not serve is left out. Counts as
 * failed: a non-2xx answer, or a GraphQL answer with errors.
 *
 * Over the process's own loopback socket once it listens, so what real callers run first warms
 * too: node:http's parser and socket writes, Fastify's reply to a socket, the connection's
 * setup. Measured (docs/performance.md, "Warm start at half load"): warmed through inject (no
 * socket), the first second after ready at half the REST maximum still queued for 0.7–1.5 s
 * while the socket paths compiled. Where there is no plain loopback listener (TLS, not yet
 * listening), through Fastify's inject.
 *
 * `atLeast`: past the deadline, it goes on until that many requests were answered, but not past
 * `atLeast.until`. V8 compiles a function when it has run enough, not when time has passed: on a
 * machine busy with other work a 2-s warm-up sent 11–251 requests instead of ~800, and what it had
 * not run enough was compiled under the first callers' load (docs/performance.md, "Second 0
 * counted").
 */
export async function sendUntil(
  app: FastifyInstance,
  requests: readonly WarmUpSend[],
  o: { deadline: number; concurrency?: number; atLeast?: { requests: number; until: number } },
): Promise<{ requests: number; failed: number; failures?: string[] }> {
  let sent = 0;
  let failed = 0;
  const failures: string[] = [];
  const served = requests.filter((make) => {
    const r = typeof make === 'function' ? make(0) : make.first;
    return app.hasRoute({ method: r.method ?? 'GET', url: String(r.url ?? '/').split('?')[0] ?? '/' });
  });
  if (served.length === 0) return { requests: 0, failed: 0 };
  // A lane per kind at least (`concurrency` lanes at least in all): a lane sends its next request
  // when its last is answered, so the cheap hot paths run as often as they can beside the
  // checkout rehearsals, several requests long each. Taken in turn from one queue, four workers
  // were held by rehearsals most of the time: a 2-s warm-up sent 242 requests, about 40 of them
  // REST quotes, short of the hundreds of calls V8 wants before it optimises a function
  // (docs/performance.md, "The warm-up's lanes").
  const concurrency = Math.max(o.concurrency ?? 4, served.length);
  // Listening follows ready at once; a process that does not listen within 1 s warms by inject.
  const origin = await loopbackOrigin(app, Math.min(1000, o.deadline - performance.now()));
  const pool = origin ? new Pool(origin, { connections: concurrency }) : undefined;
  // The rehearsals carry this process's token themselves (gateway/agent/rehearsal.ts); the other
  // requests go as a caller sends them.
  const send = async (r: InjectOptions): Promise<WarmUpAnswer> => {
    if (!pool) {
      const res = await app.inject(r);
      return { status: res.statusCode, body: res.body };
    }
    const res = await pool.request({
      method: (r.method ?? 'GET') as 'GET',
      path: String(r.url ?? '/'),
      headers: (r.headers ?? {}) as Record<string, string>,
      ...(r.payload !== undefined
        ? { body: typeof r.payload === 'string' ? r.payload : JSON.stringify(r.payload) }
        : {}),
    });
    return { status: res.statusCode, body: await res.body.text() };
  };
  // A counter per kind, shared by its lanes: each n of a kind is sent once (a request made from
  // n, an order's Idempotency-Key say, is not sent twice at once), and a kind's n run 0, 1, 2, …,
  // so every form its maker derives from n is sent (the price's regions, the order's two routes).
  // One counter for all kinds gave a kind only the n its turn fell on: the second of two kinds
  // in step, only odd n.
  const next = served.map(() => 0);
  const counted = async (request: InjectOptions): Promise<WarmUpAnswer> => {
    const res = await send(request).catch(() => ({ status: 0, body: '' }));
    sent++;
    // A GraphQL answer with errors is a 200 too: a warm-up query that broke must show.
    const graphqlErrors = String(request.url).startsWith('/graphql') && res.body.includes('"errors":');
    if (res.status < 200 || res.status >= 300 || graphqlErrors) {
      failed++;
      if (failures.length < FAILURES_NAMED)
        failures.push(
          `${request.method ?? 'GET'} ${String(request.url).split('?')[0]} ${res.status} ${res.body.slice(0, 160)}`,
        );
    }
    return res;
  };
  const going = () => {
    const now = performance.now();
    return (
      now < o.deadline || (o.atLeast !== undefined && sent < o.atLeast.requests && now < o.atLeast.until)
    );
  };
  const worker = async (lane: number) => {
    const k = lane % served.length;
    const kind = served[k] as WarmUpSend;
    while (going()) {
      const n = (next[k] as number)++;
      if (typeof kind === 'function') await counted(kind(n));
      else await kind.run(n, counted).catch(() => {});
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, (_, lane) => worker(lane)));
  } finally {
    await pool?.close();
  }
  return { requests: sent, failed, ...(failures.length ? { failures } : {}) };
}

/**
 * The warm-up's least work, from the configuration: WARM_UP_REQUESTS answered, but not past
 * WARM_UP_MAX_MS after `started` (performance.now()); none when WARM_UP_REQUESTS is 0.
 */
export function atLeastOf(
  config: Pick<Config, 'WARM_UP_REQUESTS' | 'WARM_UP_MAX_MS'>,
  started: number,
): { atLeast?: { requests: number; until: number } } {
  if (config.WARM_UP_REQUESTS <= 0) return {};
  return { atLeast: { requests: config.WARM_UP_REQUESTS, until: started + config.WARM_UP_MAX_MS } };
}

/** WARM_UP_V8_FLAGS's flags (the configuration checked their form). */
function v8FlagsOf(text: string): string[] {
  const parsed = parseV8Flags(text);
  if ('bad' in parsed) throw new Error(`WARM_UP_V8_FLAGS: ${parsed.bad} is not a V8 flag`);
  return parsed.flags;
}

/**
 * Holds /readyz at 503 `warming up` until `warm` has run (started when the app is ready), when
 * WARM_UP_MS > 0. A warm-up that fails leaves the process cold, not broken: ready anyway. Call it
 * before the app is ready.
 */
export function readyWhenWarm(
  app: FastifyInstance,
  platform: Platform,
  warm: (budgetMs: number) => Promise<WarmUpReport>,
): void {
  const budgetMs = platform.config.WARM_UP_MS;
  if (budgetMs <= 0) return;
  let warmed = false;
  platform.readiness.set('warm-up', async () => {
    if (!warmed) throw new Error('warming up');
  });
  // Started once the app is ready (its routes and plugins loaded), not awaited: listening goes on.
  app.addHook('onReady', async () => {
    void (async () => {
      try {
        await app.ready();
        // V8's tier-up flags for the warm-up alone, put back before ready (lib/http/warm-up-v8.ts).
        let flags = v8FlagsOf(platform.config.WARM_UP_V8_FLAGS);
        const report = await withV8Flags(
          flags,
          () => warm(budgetMs),
          (err) => {
            platform.log.warn({ err }, 'WARM_UP_V8_FLAGS not set; warming up without them');
            flags = [];
          },
        );
        platform.log.info(
          { ...report, ...(flags.length > 0 ? { v8Flags: flags.join(' ') } : {}) },
          'warmed up',
        );
      } catch (err) {
        platform.log.warn({ err }, 'warm-up failed; serving cold');
      } finally {
        warmed = true;
      }
    })();
  });
}

/**
 * The distributed topology for the open-loop benches (issue 29): the three compiled subgraph
 * processes over the machine's Redis and a fresh Postgres schema, and two compiled gateway
 * replicas in front, as an operator runs them (`npm run start:<name>`). The load is spread over
 * both gateways.
 *
 * A gateway reaches a subgraph through its Service, which routes only to ready pods: so the
 * gateways start once every subgraph process answers /readyz 200, as they would in a rolling
 * deploy. `ports` lets a warm-start bench know the gateways' addresses before they listen.
 */
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { QUOTE_CATALOG_SIZE } from '../../harness/requests.ts';
import { type SubgraphProcesses, startSubgraphProcesses } from '../peers/subgraph-processes.ts';
import { addRuleDirect } from '../scenarios/quote.ts';

export interface DistributedBench {
  subgraphs: SubgraphProcesses;
  /** Starts the gateway replicas (on `ports` when given); resolves when each listens. */
  startGateways(o?: {
    ports?: number[];
    env?: Record<string, string>;
    /** Extra node flags for gateway i, e.g. `--cpu-prof`. */
    nodeArgs?: (i: number) => string[];
  }): Promise<ServiceProcess[]>;
  /** The gateways' base URLs once started. */
  urls: string[];
  stop(): Promise<void>;
}

/** Polls `url` until it answers 200 (every 5 ms), up to `timeoutMs`. */
export async function untilReady(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const res = await fetch(url).catch(() => undefined);
    await res?.arrayBuffer();
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${url} did not answer ready in ${timeoutMs} ms`);
}

export async function startDistributedBench(
  o: {
    env?: Record<string, string>;
    gateways?: number;
    /** Extra node flags for each subgraph process by name, e.g. `--cpu-prof`. */
    nodeArgs?: (name: 'pricing' | 'promotions' | 'procurement') => string[];
  } = {},
): Promise<DistributedBench> {
  const env = {
    CATALOG_SIZE: String(QUOTE_CATALOG_SIZE),
    // The bucket is large so a load measures the checks, not the limit (bench/scenarios/orders.ts).
    RATE_LIMIT_CAPACITY: '1000000000',
    RATE_LIMIT_REFILL_PER_SECOND: '1000000',
    ...o.env,
  };
  const subgraphs = await startSubgraphProcesses(env, o.nodeArgs);
  const gateways: ServiceProcess[] = [];
  const bench: DistributedBench = {
    subgraphs,
    urls: [],
    async startGateways(g = {}) {
      await Promise.all(Object.values(subgraphs.processes).map((p) => untilReady(`${p.url}/readyz`)));
      const gw = {
        ...subgraphs.env,
        ...g.env,
        TOPOLOGY: 'distributed',
        LOG_LEVEL: 'info',
        PRICING_URL: subgraphs.urls.pricing,
        PROMOTIONS_URL: subgraphs.urls.promotions,
        PROCUREMENT_URL: subgraphs.urls.procurement,
      };
      const started = await Promise.all(
        Array.from({ length: o.gateways ?? 2 }, (_, i) =>
          startProcess('gateway', { ...gw, ...(g.ports?.[i] ? { PORT: String(g.ports[i]) } : {}) }, 120_000, {
            compiled: true,
            nodeArgs: g.nodeArgs?.(i) ?? [],
          }),
        ),
      );
      gateways.push(...started);
      bench.urls = started.map((s) => s.url);
      return started;
    },
    async stop() {
      await Promise.all(gateways.map((g) => g.stop()));
      await subgraphs.close();
    },
  };
  try {
    await addRuleDirect(subgraphs);
  } catch (err) {
    await subgraphs.close();
    throw err;
  }
  return bench;
}

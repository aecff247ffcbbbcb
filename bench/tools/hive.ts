/**
 * Our distributed gateway against Hive Gateway 2.15 (The Guild) and the naive Apollo gateway, on
 * the same three subgraph processes (issue 29, "Ahead of the peer a user would pick"):
 *   npm run build && tsx bench/tools/hive.ts [rounds=3] [seconds=10]
 *   npm run bench -- --only hive          (the same, written into docs/benchmarks.md)
 * Each round starts each gateway in turn (the order rotates by round): ours, ours with
 * SUBGRAPH_FETCH_MERGING=off, Hive with its defaults, Hive with `deduplicateInflightRequests`
 * off, the naive Apollo gateway. It warms each up 3 s, loads it
 * with the 10-line GraphQL cart quote (closed loop, 10 connections) and reads /proc around the
 * load: requests/s, CPU ms per quote of the gateway and of the three subgraphs, the gateway's RSS.
 * Then it sends bursts of 10 concurrent identical quotes and counts the distinct quote-token
 * `jti`s: a gateway that hands two concurrent callers one answer shows fewer than it sent.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { type ServiceProcess, startCommand, startProcess } from '../../harness/processes.ts';
import { QUOTE_REQUESTS } from '../../harness/requests.ts';
import { load } from '../loadgen.ts';
import { startHiveGateway } from '../peers/hive-gateway.ts';
import { type SubgraphProcesses, startSubgraphProcesses } from '../peers/subgraph-processes.ts';
import { addRuleDirect } from '../scenarios/quote.ts';
import { cpuSeconds } from './proc.ts';

type Peer = 'ours' | 'ours, merging off' | 'hive' | 'hive, dedupe off' | 'naive';
const PEERS: Peer[] = ['ours', 'hive', 'ours, merging off', 'hive, dedupe off', 'naive'];

export interface Measured {
  round: number;
  peer: Peer;
  rps: number;
  p99: number;
  gatewayCpu: number;
  subgraphCpu: number;
  rssMb: number;
  jtis: number;
  quotes: number;
  failed: number;
  load: string;
}

const rssMb = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

const jtiOf = (token: string): string | undefined => {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { jti?: string }).jti;
};

/** Bursts of `concurrent` identical quotes at once: how many tokens came back, how many distinct jtis. */
export async function countJtis(
  url: string,
  bursts = 10,
  concurrent = 10,
): Promise<{ quotes: number; jtis: number; failed: number }> {
  const request = QUOTE_REQUESTS.graphql();
  const seen = new Set<string>();
  let quotes = 0;
  let failed = 0;
  for (let b = 0; b < bursts; b++) {
    const replies = await Promise.all(
      Array.from({ length: concurrent }, () =>
        fetch(`${url}${request.path}`, { method: 'POST', headers: request.headers, body: request.body })
          .then((r) => r.json() as Promise<{ data?: { cartQuote?: { quoteToken?: string } } }>)
          .catch(() => ({ data: undefined })),
      ),
    );
    for (const r of replies) {
      const jti = r.data?.cartQuote?.quoteToken ? jtiOf(r.data.cartQuote.quoteToken) : undefined;
      if (!jti) failed++;
      else {
        quotes++;
        seen.add(jti);
      }
    }
  }
  return { quotes, jtis: seen.size, failed };
}

async function start(peer: Peer, subgraphs: SubgraphProcesses): Promise<ServiceProcess> {
  const env = {
    ...subgraphs.env,
    PRICING_URL: subgraphs.urls.pricing,
    PROMOTIONS_URL: subgraphs.urls.promotions,
    PROCUREMENT_URL: subgraphs.urls.procurement,
  };
  const secret = subgraphs.env.GATEWAY_SHARED_SECRET ?? '';
  if (peer === 'ours' || peer === 'ours, merging off')
    return startProcess(
      'gateway',
      {
        ...env,
        TOPOLOGY: 'distributed',
        LOG_LEVEL: 'info',
        SUBGRAPH_FETCH_MERGING: peer === 'ours' ? 'on' : 'off',
      },
      120_000,
      { compiled: true },
    );
  if (peer === 'naive')
    return startCommand(
      'naive',
      process.execPath,
      ['--import', 'tsx', 'bench/peers/naive-gateway-main.ts'],
      env,
    );
  return startHiveGateway(subgraphs.urls, secret, { dedupe: peer === 'hive', label: peer });
}

async function measure(
  round: number,
  peer: Peer,
  subgraphs: SubgraphProcesses,
  seconds: number,
): Promise<Measured> {
  const gw = await start(peer, subgraphs);
  try {
    const request = QUOTE_REQUESTS.graphql();
    await load({ url: gw.url, requests: [request], connections: 10, seconds: 3 });
    const gwPid = gw.child.pid as number;
    const subPids = Object.values(subgraphs.processes).map((p) => p.child.pid as number);
    const before = [gwPid, ...subPids].map(cpuSeconds);
    const loadBefore = loadavg()[0] ?? 0;
    const r = await load({ url: gw.url, requests: [request], connections: 10, seconds });
    const after = [gwPid, ...subPids].map(cpuSeconds);
    const perQuote = (i: number) => (((after[i] ?? 0) - (before[i] ?? 0)) * 1000) / r.requests;
    const rss = rssMb(gwPid);
    const loadAfter = loadavg()[0] ?? 0;
    const j = await countJtis(gw.url);
    return {
      round,
      peer,
      rps: r.rps,
      p99: r.p99,
      gatewayCpu: perQuote(0),
      subgraphCpu: perQuote(1) + perQuote(2) + perQuote(3),
      rssMb: rss,
      ...j,
      failed: j.failed + r.non2xx + r.errors,
      load: `${loadBefore.toFixed(1)}–${loadAfter.toFixed(1)}`,
    };
  } finally {
    await gw.stop();
  }
}

/** Alternated rounds of the four gateways over one set of subgraph processes; the table and its rows. */
export async function hiveComparison(
  rounds: number,
  seconds: number,
  log: (s: string) => void,
): Promise<{ rows: Measured[]; table: string }> {
  const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: '10000' });
  const rows: Measured[] = [];
  try {
    await addRuleDirect(subgraphs);
    for (let round = 1; round <= rounds; round++) {
      const order = PEERS.map((_, i) => PEERS[(i + round - 1) % PEERS.length] as Peer);
      for (const peer of order) {
        log(`hive comparison, round ${round}, ${peer} … `);
        const m = await measure(round, peer, subgraphs, seconds);
        rows.push(m);
        log(
          `${Math.round(m.rps)} /s, gateway ${m.gatewayCpu.toFixed(2)} ms, subgraphs ${m.subgraphCpu.toFixed(2)} ms per quote, ${m.jtis}/${m.quotes} distinct jti\n`,
        );
      }
    }
  } finally {
    await subgraphs.close();
  }
  return { rows, table: hiveTable(rows) };
}

export function hiveTable(rows: Measured[]): string {
  const lines = [
    '| round | gateway | req/s | ours ÷ this | p99 ms | gateway CPU ms/quote | subgraph CPU ms/quote | gateway RSS MB | distinct jti / quotes (10 at once) | failed | load average |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const m of rows) {
    const ours = rows.find((o) => o.round === m.round && o.peer === 'ours');
    const ratio = ours && m.peer !== 'ours' ? `${(ours.rps / m.rps).toFixed(2)}×` : '—';
    lines.push(
      `| ${m.round} | ${m.peer} | ${Math.round(m.rps)} | ${ratio} | ${m.p99.toFixed(1)} | ${m.gatewayCpu.toFixed(2)} | ${m.subgraphCpu.toFixed(2)} | ${Math.round(m.rssMb)} | ${m.jtis} / ${m.quotes} | ${m.failed} | ${m.load} |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [rounds = 3, seconds = 10] = process.argv.slice(2).map(Number);
  process.env.APOLLO_TELEMETRY_DISABLED = '1';
  const { table } = await hiveComparison(rounds, seconds, (s) => process.stderr.write(s));
  console.log(table);
}

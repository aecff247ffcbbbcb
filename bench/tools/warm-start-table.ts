/**
 * The warm-start bench group's table, apart from the two measurements it alternates (embedded:
 * warm-start.ts, distributed: warm-start-distributed.ts), so neither imports the other's caller.
 */
import { loadavg } from 'node:os';
import { type WarmStart, warmStart } from './warm-start.ts';
import { warmStartDistributed } from './warm-start-distributed.ts';

/**
 * The two systems each round alternates (issue 48): `before`, the system before issue 48 (the
 * warm-up of issue 29, quotes and prices only; no shedding; one accept descriptor); `after`, the
 * defaults (orders rehearsed in the warm-up, requests over their queue-time budget shed, since
 * session 58 quotes on the loop's busy stretch as well, 16 extra accept descriptors). Both warm up for WARM_UP_MS (2 s).
 */
export const VARIANTS: Record<string, Record<string, string>> = {
  before: {
    WARM_UP_ORDERS: 'false',
    SHED_QUOTE_BUDGET_MS: '0',
    SHED_ORDER_BUDGET_MS: '0',
    ACCEPT_HANDLES: '0',
  },
  after: {},
};

const f = (n: number) => n.toFixed(1);
const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;

/** The worst second's p99 of each stream, and the shed share of the whole first window. */
function summary(x: WarmStart) {
  const worst = (pick: (s: WarmStart['perSecond'][number]) => number) =>
    Math.max(0, ...x.perSecond.map(pick));
  return {
    worstQuote: worst((s) => s.primaryP99),
    worstOrders: worst((s) => s.ordersP99),
    shedQuotes: pct(x.first.primary.shed, x.first.primary.sent),
    shedOrders: pct(x.first.orders.shed, x.first.orders.sent),
  };
}

/** One row per second of one start: `| second | quote p99 | shed | orders p99 | shed | busy |`. */
function perSecondRows(label: string, x: WarmStart): string[] {
  return x.perSecond.map(
    (s) =>
      `| ${label} | ${s.second} | ${f(s.primaryP99)} | ${s.primaryShed}/${s.primarySent} | ${f(s.ordersP99)} | ${s.ordersShed}/${s.ordersSent} | ${(s.machine.busy * 100).toFixed(0)} % |`,
  );
}

/**
 * The bench group (`npm run bench -- --only warm-start`): alternated rounds of the two variants,
 * on each topology asked for (the distributed one: bench/tools/warm-start-distributed.ts). The
 * summary table, then every start's seconds.
 */
export async function warmStartTable(
  rounds: number,
  o: { rate: number; seconds: number; distributedRate?: number },
  log: (s: string) => void,
  topologies: ('embedded' | 'distributed')[] = ['embedded'],
): Promise<string> {
  const lines = [
    `| topology | round | system | quote req/s | start → ready (s) | quote p99, first ${o.seconds} s / worst second | orders p99, first ${o.seconds} s / worst second | shed quotes / orders, first ${o.seconds} s | quote p99 steady | orders p99 steady | worst second ÷ steady, quote / orders | shed steady | machine busy first / steady | load average |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const seconds = [
    '| start | second after ready | quote p99 (accepted) | quotes shed / due | orders p99 (accepted) | orders shed / due | machine busy |',
    '|---|---|---|---|---|---|---|',
  ];
  for (let i = 1; i <= rounds; i++) {
    for (const topology of topologies) {
      for (const [variant, env] of Object.entries(VARIANTS)) {
        const rate = topology === 'distributed' ? (o.distributedRate ?? o.rate) : o.rate;
        const x =
          topology === 'distributed'
            ? await warmStartDistributed(env, { rate, seconds: o.seconds })
            : await warmStart(env, { rate, seconds: o.seconds });
        const la = loadavg()[0]?.toFixed(1);
        const busy = `${(x.machine.first.busy * 100).toFixed(0)} % / ${(x.machine.steady.busy * 100).toFixed(0)} %`;
        const s = summary(x);
        const steadyShed = x.steady.primary.shed + x.steady.orders.shed;
        const ratio = `${(s.worstQuote / x.steady.primary.p99).toFixed(1)}× / ${(s.worstOrders / x.steady.orders.p99).toFixed(1)}×`;
        log(
          `warm-start / ${topology} round ${i} ${variant}: ready ${(x.readyMs / 1000).toFixed(1)} s, first p99 ${f(x.first.primary.accepted.p99)} / ${f(x.first.orders.accepted.p99)} ms (worst second ${f(s.worstQuote)} / ${f(s.worstOrders)}), shed ${s.shedQuotes} / ${s.shedOrders}, steady ${f(x.steady.primary.p99)} / ${f(x.steady.orders.p99)} ms, busy ${busy}, load ${la}\n`,
        );
        lines.push(
          `| ${topology} | ${i} | ${variant} | ${rate} | ${(x.readyMs / 1000).toFixed(1)} | ${f(x.first.primary.accepted.p99)} / ${f(s.worstQuote)} | ${f(x.first.orders.accepted.p99)} / ${f(s.worstOrders)} | ${s.shedQuotes} / ${s.shedOrders} | ${f(x.steady.primary.p99)} | ${f(x.steady.orders.p99)} | ${ratio} | ${steadyShed} | ${busy} | ${la} |`,
        );
        seconds.push(...perSecondRows(`${topology} ${i} ${variant}`, x));
      }
    }
  }
  return `${lines.join('\n')}\n\nEach start's seconds after its first ready answer (p99 of the requests not shed, by due time):\n\n${seconds.join('\n')}`;
}

/**
 * The overload bench group's table (`npm run bench -- --only overload`, issue 48): alternated
 * rounds with the defaults (`on`: shedding with fixed limits and budgets and the quotes' busy
 * stretch, 16 extra accept descriptors), `mean only` (the same without the busy stretch:
 * SHED_BUSY_STRETCH=none, the A/B of lib/http/busy-stretch.ts) and `off` (the system before issue
 * 48: no shedding, one accept descriptor), on each topology asked for; bench/tools/overload.ts
 * measures one. The middle arm was the adaptive quote limit (SHED_ADAPTIVE_CLASSES=quote) until
 * session 54 and one accept descriptor (ACCEPT_HANDLES=0) until session 58: options measured then
 * (docs/performance.md, docs/benchmarks.md).
 */
import { loadavg } from 'node:os';
import type { StreamResult } from '../open-loop/generator.ts';
import { overload } from './overload.ts';

const OFF = { SHED_QUOTE_BUDGET_MS: '0', SHED_ORDER_BUDGET_MS: '0', ACCEPT_HANDLES: '0' };
const MEAN_ONLY = { SHED_BUSY_STRETCH: 'none' };

export interface OverloadRun {
  table: string;
  /** The REST quote's closed-loop maximum per topology (the last round's with shedding on). */
  maxima: Partial<Record<'embedded' | 'distributed', number>>;
}

export async function overloadTable(
  rounds: number,
  seconds: number,
  log: (s: string) => void,
  topologies: ('embedded' | 'distributed')[] = ['embedded'],
): Promise<OverloadRun> {
  const f = (n: number) => n.toFixed(1);
  const shed = (x: StreamResult) => `${((100 * x.shed) / Math.max(1, x.sent)).toFixed(1)} %`;
  const lines = [
    '| topology | round | shedding | quote max req/s (closed loop) | steady (50 % + 100 orders/s) p99 quote / orders | shed at 50 % (count), quotes / orders | at 150 % + 100 orders/s: accepted p99 quote / orders | ÷ steady (goal ≤ 5×) | shed quotes / orders | quotes answered 2xx/s | other failures | load average |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const maxima: OverloadRun['maxima'] = {};
  for (let i = 1; i <= rounds; i++)
    for (const topology of topologies)
      for (const [name, env] of [
        ['on', {}],
        ['mean only', MEAN_ONLY],
        ['off', OFF],
      ] as const) {
        const r = await overload(topology, env, { seconds });
        if (name === 'on') maxima[topology] = r.max;
        const over = r.over;
        const ratio = `${(over.quote.accepted.p99 / r.steady.quote.p99).toFixed(1)}× / ${(over.orders.accepted.p99 / r.steady.orders.p99).toFixed(1)}×`;
        const other = [over.quote, over.orders].reduce((a, x) => a + x.non2xx - x.shed + x.errors, 0);
        const served = (over.quote.completed - over.quote.non2xx) / seconds;
        const la = loadavg()[0]?.toFixed(1);
        log(
          `overload / ${topology} round ${i} shedding ${name}: max ${Math.round(r.max)}/s, steady ${f(r.steady.quote.p99)} / ${f(r.steady.orders.p99)} ms (shed ${r.steady.quote.shed} / ${r.steady.orders.shed}), at 150 % accepted ${f(over.quote.accepted.p99)} / ${f(over.orders.accepted.p99)} ms (${ratio}), shed ${shed(over.quote)} / ${shed(over.orders)}, load ${la}\n`,
        );
        lines.push(
          `| ${topology} | ${i} | ${name} | ${Math.round(r.max)} | ${f(r.steady.quote.p99)} / ${f(r.steady.orders.p99)} | ${r.steady.quote.shed} / ${r.steady.orders.shed} | ${f(over.quote.accepted.p99)} / ${f(over.orders.accepted.p99)} | ${ratio} | ${shed(over.quote)} / ${shed(over.orders)} | ${Math.round(served)} | ${other} | ${la} |`,
        );
      }
  return { table: lines.join('\n'), maxima };
}

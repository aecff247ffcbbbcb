/**
 * The warm-start bench group's table, apart from the two measurements it alternates (embedded:
 * warm-start.ts, distributed: warm-start-distributed.ts), so neither imports the other's caller.
 */
import { loadavg } from 'node:os';
import { warmStart } from './warm-start.ts';
import { warmStartDistributed } from './warm-start-distributed.ts';

/**
 * The bench group (`npm run bench -- --only warm-start`): alternated rounds without and with the
 * warm-up, on each topology asked for (the distributed one: bench/tools/warm-start-distributed.ts).
 */
export async function warmStartTable(
  rounds: number,
  o: { rate: number; seconds: number; distributedRate?: number },
  log: (s: string) => void,
  topologies: ('embedded' | 'distributed')[] = ['embedded'],
): Promise<string> {
  const lines = [
    `| topology | round | WARM_UP_MS | quote req/s | start → ready (s) | REST quote p99, first ${o.seconds} s (max) | orders p99, first ${o.seconds} s (max) | REST quote p99, steady | orders p99, steady | machine busy (stolen), first / steady | load average |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const f = (n: number) => n.toFixed(1);
  for (let i = 1; i <= rounds; i++) {
    for (const topology of topologies) {
      for (const w of ['0', '2000']) {
        const rate = topology === 'distributed' ? (o.distributedRate ?? o.rate) : o.rate;
        const x =
          topology === 'distributed'
            ? await warmStartDistributed({ WARM_UP_MS: w }, { rate, seconds: o.seconds })
            : await warmStart({ WARM_UP_MS: w }, { rate, seconds: o.seconds });
        const la = loadavg()[0]?.toFixed(1);
        const pct = (n: number) => (n * 100).toFixed(0);
        const machine = `${pct(x.machine.first.busy)} % (${pct(x.machine.first.stolen)}) / ${pct(x.machine.steady.busy)} % (${pct(x.machine.steady.stolen)})`;
        log(
          `warm-start / ${topology} round ${i}, WARM_UP_MS=${w}: ready ${(x.readyMs / 1000).toFixed(1)} s, first p99 ${f(x.first.primary.p99)} / ${f(x.first.orders.p99)} ms, steady ${f(x.steady.primary.p99)} / ${f(x.steady.orders.p99)} ms, machine ${machine}, load ${la}\n`,
        );
        lines.push(
          `| ${topology} | ${i} | ${w} | ${rate} | ${(x.readyMs / 1000).toFixed(1)} | ${f(x.first.primary.p99)} (${f(x.first.primary.max)}) | ${f(x.first.orders.p99)} (${f(x.first.orders.max)}) | ${f(x.steady.primary.p99)} | ${f(x.steady.orders.p99)} | ${machine} | ${la} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

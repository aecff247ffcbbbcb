/**
 * Node releases compared (`BENCH_COMPARE_NODE=/path/to/node npm run bench -- --only open-loop`):
 * the closed-loop maximum of each path of the embedded system on this run's Node and on the
 * other binary, the two systems started in turn, twice (A B A B), so a drift of the machine
 * shows as a spread instead of a ratio. Each system is the compiled `npm start` process.
 */
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { closedMax, nodeVersion, PATHS, type Path } from './run.ts';

export interface RuntimeComparison {
  a: string;
  b: string;
  /** Per path: the maxima on A and on B, one per round. */
  rows: { path: Path['key']; a: number[]; b: number[]; rssA: number[]; rssB: number[] }[];
}

async function maxima(node: string | undefined, quick: boolean) {
  const sys = await startEmbeddedSystem(node);
  try {
    const out: Record<string, number> = {};
    for (const p of PATHS) out[p.key] = await closedMax(sys.url, p.requests(), quick);
    const status = await import('node:fs').then((fs) =>
      fs.readFileSync(`/proc/${sys.child.pid}/status`, 'utf8'),
    );
    const rss = Number((/VmRSS:\s+(\d+) kB/.exec(status) ?? [])[1] ?? 0) / 1024;
    return { out, rss };
  } finally {
    await sys.stop();
  }
}

export async function compareRuntimes(
  other: string,
  quick: boolean,
  log: (s: string) => void,
): Promise<RuntimeComparison> {
  const self = process.env.BENCH_NODE;
  const rows = PATHS.map((p) => ({
    path: p.key,
    a: [] as number[],
    b: [] as number[],
    rssA: [] as number[],
    rssB: [] as number[],
  }));
  for (let round = 0; round < 2; round++) {
    for (const [side, node] of [
      ['a', self],
      ['b', other],
    ] as const) {
      const m = await maxima(node, quick);
      for (const row of rows) {
        row[side].push(m.out[row.path] ?? 0);
        (side === 'a' ? row.rssA : row.rssB).push(m.rss);
      }
      log(
        `runtime ${side === 'a' ? nodeVersion(self) : nodeVersion(other)} round ${round + 1}: ${JSON.stringify(m.out)} rss ${m.rss.toFixed(0)} MB\n`,
      );
    }
  }
  return { a: nodeVersion(self), b: nodeVersion(other), rows };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

export function runtimeTable(c: RuntimeComparison): string {
  const lines = [
    `| path | ${c.a} req/s (rounds) | ${c.b} req/s (rounds) | ${c.b} / ${c.a} |`,
    '|---|---|---|---|',
  ];
  const name = (k: string) => PATHS.find((p) => p.key === k)?.name ?? k;
  const list = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ');
  for (const r of c.rows) {
    lines.push(
      `| ${name(r.path)} | ${list(r.a)} | ${list(r.b)} | ${(median(r.b) / median(r.a)).toFixed(2)}× |`,
    );
  }
  const rss = c.rows[0];
  if (rss)
    lines.push(
      `| RSS of the embedded process after the loads, MB | ${list(rss.rssA)} | ${list(rss.rssB)} | ${(median(rss.rssB) / median(rss.rssA)).toFixed(2)}× |`,
    );
  return lines.join('\n');
}

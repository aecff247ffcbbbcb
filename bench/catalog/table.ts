/** The catalog group's tables (run.ts), as docs/benchmarks.md shows them. */
import { type CatalogRun, PEER_MAX_SKUS, type SizedSearch } from './run.ts';

const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Issue 47's goals: p99 at half the maximum, and import rates (products/s). */
export const GOALS = {
  embeddedP99: 10,
  postgresP99: 25,
  postgresGoalProducts: 1_000_000,
  importEmbedded: 1_000,
  importPostgres: 5_000,
};

function searchRow(store: string, s: SizedSearch, goal: string, met: string): string {
  const o = s.ours;
  const p = s.peer;
  const products = s.products > 0 ? ` (${fmt(s.products)} products)` : '';
  const peer = p
    ? `${fmt(p.max)} | ${fmt(p.half.p99, 2)} | ${fmt(o.half.p99 / p.half.p99, 1)}× | ${fmt(o.max / p.max, 2)}×`
    : `not run (above ${fmt(PEER_MAX_SKUS)} SKUs) | — | — | —`;
  return `| ${store} | ${fmt(s.skus)}${products} | ${fmt(o.max)} | ${fmt(o.half.offered)} | ${fmt(o.half.p50, 2)} | ${fmt(o.half.p99, 2)} | ${o.half.errors + o.half.non2xx} | ${peer} | ${goal} | ${met} |`;
}

function searchTable(run: CatalogRun): string {
  const lines = [
    '| store | catalog, SKUs | ours: closed-loop max/s | open loop at 50 %, req/s | p50 ms | p99 ms | failed | MiniSearch: max/s | MiniSearch p99 ms at 50 % | p99 ours ÷ MiniSearch | max ours ÷ MiniSearch | p99 goal | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const e = run.embedded;
  lines.push(
    searchRow(
      'embedded (PGlite)',
      e,
      `≤ ${GOALS.embeddedP99} ms`,
      e.ours.half.p99 <= GOALS.embeddedP99 ? 'yes' : 'no',
    ),
  );
  // A smaller catalog's row says how it stands at its size; "not measured" only when no row of
  // this run reached the goal's size.
  const goalSizeRun = run.postgres.some((s) => s.products >= GOALS.postgresGoalProducts);
  for (const s of run.postgres) {
    const ok = s.ours.half.p99 <= GOALS.postgresP99;
    const atGoalSize = s.products >= GOALS.postgresGoalProducts;
    const met = atGoalSize
      ? ok
        ? 'yes'
        : 'no'
      : `${ok ? 'within' : 'over'} it at this size${goalSizeRun ? '' : '; 1,000,000 not measured'}`;
    lines.push(searchRow('PostgreSQL', s, `≤ ${GOALS.postgresP99} ms at 1,000,000 products`, met));
  }
  return lines.join('\n');
}

function relevanceTable(run: CatalogRun): string {
  const r = run.relevance;
  const lines = ['| queries | n | nDCG@10 ours | nDCG@10 MiniSearch |', '|---|---|---|---|'];
  for (const [kind, k] of Object.entries(r.byKind))
    lines.push(`| ${kind} | ${k.n} | ${fmt(k.ours, 3)} | ${fmt(k.peer, 3)} |`);
  const n = Object.values(r.byKind).reduce((s, k) => s + k.n, 0);
  lines.push(`| **all** | ${n} | **${fmt(r.ours, 3)}** | **${fmt(r.peer, 3)}** |`);
  // The queries where ours ranks below MiniSearch's, worst first (none: say so).
  const behind = r.worst.filter((w) => w.ours < w.peer);
  const worst = behind.map((w) => `"${w.query}" ${fmt(w.ours, 2)} against ${fmt(w.peer, 2)}`).join('; ');
  return `${lines.join('\n')}\n\n${behind.length > 0 ? `Our lowest against MiniSearch's: ${worst}.` : "No query's nDCG@10 is lower than MiniSearch's."}`;
}

function importTable(run: CatalogRun): string {
  const lines = [
    '| store | products (SKUs) in the feed | seconds | products/s | goal | met | importer peak RSS MB |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const { store, run: i } of run.imports) {
    const goal = store === 'embedded' ? GOALS.importEmbedded : GOALS.importPostgres;
    lines.push(
      `| ${store} | ${fmt(i.products)} (${fmt(i.variants)}) | ${fmt(i.seconds, 1)} | ${fmt(i.rate)} | ≥ ${fmt(goal)} | ${i.rate >= goal ? 'yes' : 'no'} | ${fmt(i.peakRssMb)} |`,
    );
  }
  return lines.join('\n');
}

export function catalogTables(run: CatalogRun): string {
  const seeds = run.postgres
    .filter((s) => s.seedSeconds !== undefined)
    .map((s) => `${fmt(s.skus)} SKUs in ${fmt(s.seedSeconds ?? 0)} s`)
    .join(', ');
  return [
    searchTable(run),
    `PostgreSQL seeds (pricing's seedCatalog, from the bench process): ${seeds}. Load average (uptime, 1/5/15 min) at the start and after each step: ${run.loads.join(' → ')}.`,
    relevanceTable(run),
    importTable(run),
  ].join('\n\n');
}

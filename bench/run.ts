/**
 * `npm run bench`: runs every scenario in bench/scenarios/*.ts and rewrites the results table
 * in docs/benchmarks.md. `npm run bench -- --quick` for a fast smoke run (not written);
 * `npm run bench -- --only <group>[,<group>…]` to run some groups in one run (e.g.
 * `--only mixed,warm-start`, the tables issue 29 asks for side by side).
 * `--catalog-size <SKUs>`: the largest catalog the catalog group seeds on PostgreSQL.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { cartTable } from './acp/cart-table.ts';
import { type AcpRun, acpTable, runAcp } from './acp/run.ts';
import { type CatalogRun, DEFAULT_CATALOG_SIZE, runCatalog } from './catalog/run.ts';
import { catalogTables } from './catalog/table.ts';
import { type DurabilityRun, durabilityTable, runDurability } from './durability.ts';
import { type Row, runFn, runHttp, type Scenario } from './harness.ts';
import { type MemoryRow, measureMemory, memoryTable } from './memory.ts';
import { type MixedRun, mixedTable, runMixed } from './open-loop/mixed.ts';
import { type OpenLoopRun, openLoopTable, runOpenLoop } from './open-loop/run.ts';
import { compareRuntimes, type RuntimeComparison, runtimeTable } from './open-loop/runtime.ts';
import { latencySvg } from './open-loop/svg.ts';
import { runTokenCheck, type TokenCheckRun, tokenCheckTable } from './token-check/run.ts';
import { hiveComparison } from './tools/hive.ts';
import { type OverloadRun, overloadTable } from './tools/overload-table.ts';
import { warmStartTable } from './tools/warm-start-table.ts';
import { runUcp, type UcpRun, ucpTable } from './ucp/run.ts';

process.env.APOLLO_TELEMETRY_DISABLED = '1';
process.env.LOG_LEVEL ??= 'silent';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyGroups = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '').split(',') : undefined;
/** Whether `group` runs: every group without --only, else those listed. */
const runs = (group: string) => !onlyGroups || onlyGroups.includes(group);
const only = onlyGroups !== undefined;

// Processes under test run the compiled JavaScript, as `npm start` does.
execFileSync(process.execPath, [new URL('../scripts/ensure-build.mjs', import.meta.url).pathname], {
  stdio: 'inherit',
});

const dir = new URL('./scenarios/', import.meta.url);
const scenarios: Scenario[] = [];
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .sort()) {
  const mod = (await import(new URL(file, dir).href)) as { scenarios: Scenario[] };
  scenarios.push(...mod.scenarios.filter((s) => runs(s.group)));
}

const rows: Row[] = [];
const log = (s: string) => process.stderr.write(s);
let openLoop: OpenLoopRun | undefined;
if (runs('open-loop')) openLoop = await runOpenLoop(quick, log);
let acp: AcpRun | undefined;
if (runs('acp')) acp = await runAcp(quick, log);
let tokenCheck: TokenCheckRun | undefined;
if (runs('token-check')) tokenCheck = await runTokenCheck(quick, log);
let ucp: UcpRun | undefined;
if (runs('ucp')) ucp = await runUcp(quick, log);
// `--topology embedded|distributed` narrows the mixed and warm-start groups to one topology.
const topologies = args.includes('--topology')
  ? [args[args.indexOf('--topology') + 1] as 'embedded' | 'distributed']
  : (['embedded', 'distributed'] as const).slice();
let mixed: MixedRun | undefined;
if (only && runs('mixed')) mixed = await runMixed(quick, log, { topologies });
// Overload first (issue 48): its closed loops give the warm start its 50 % rate when the mixed
// group did not run.
let over: OverloadRun | undefined;
if (only && runs('overload')) over = await overloadTable(quick ? 1 : 2, quick ? 5 : 10, log, topologies);
let warm: string | undefined;
if (only && runs('warm-start')) {
  // Half the REST quote's closed-loop maximum (the issue's 50 % load) when the mixed or the
  // overload group ran in the same run and measured it; else the fixed rates (or WARM_RATE…).
  const half = (key: string, fixed: number) => {
    const max = mixed?.maxima[key] ?? over?.maxima[key.split('/')[0] as 'embedded' | 'distributed'];
    return max ? Math.round(max / 2) : fixed;
  };
  const rate = Number(process.env.WARM_RATE ?? half('embedded/rest', 1400));
  const distributedRate = Number(process.env.WARM_RATE_DISTRIBUTED ?? half('distributed/rest', 150));
  warm = await warmStartTable(
    quick ? 1 : 3,
    { rate, distributedRate, seconds: quick ? 5 : 10 },
    log,
    topologies,
  );
}
let catalog: CatalogRun | undefined;
if (runs('catalog')) {
  const size = args.includes('--catalog-size')
    ? Number(args[args.indexOf('--catalog-size') + 1])
    : DEFAULT_CATALOG_SIZE;
  catalog = await runCatalog(quick, log, { catalogSize: size });
}
let durability: DurabilityRun | undefined;
if (runs('durability')) durability = await runDurability(quick, log);
let hive: string | undefined;
if (only && runs('hive')) hive = (await hiveComparison(quick ? 1 : 3, quick ? 5 : 10, log)).table;
let runtimes: RuntimeComparison | undefined;
const compareNode = process.env.BENCH_COMPARE_NODE;
if (compareNode && runs('open-loop')) runtimes = await compareRuntimes(compareNode, quick, log);

for (const s of scenarios) {
  process.stderr.write(`${s.group} / ${s.name} … `);
  const row = s.kind === 'http' ? await runHttp(s, quick) : await runFn(s, quick);
  rows.push(row);
  process.stderr.write(`${Math.round(row.rps)} /s, p99 ${row.p99.toFixed(3)} ms\n`);
}

let memory: MemoryRow[] = [];
if (runs('memory')) {
  process.stderr.write('memory … ');
  memory = await measureMemory(quick);
  process.stderr.write(`${memory.map((m) => `${m.rssMb.toFixed(0)} MB`).join(', ')}\n`);
}

const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const lines = [
  '| group | scenario | req/s | p50 ms | p99 ms | mean ms | vs baseline (req/s) | non-2xx |',
  '|---|---|---|---|---|---|---|---|',
];
for (const r of rows) {
  const base = r.baseline ? rows.find((b) => b.group === r.group && b.name === r.baseline) : undefined;
  const ratio = base ? `${(r.rps / base.rps).toFixed(2)}× ${base.name}` : '—';
  lines.push(
    `| ${r.group} | ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.mean, 3)} | ${ratio} | ${r.non2xx ?? '—'} |`,
  );
}
const table = lines.join('\n');
console.log(table);
const memTable = memoryTable(memory);
console.log(`\n${memTable}`);

const stamp = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
const openTable = openLoop ? openLoopTable(openLoop) : undefined;
if (openTable) console.log(`\n${openTable}`);
const runtimeText = runtimes ? runtimeTable(runtimes) : undefined;
if (runtimeText) console.log(`\n${runtimeText}`);

const BENCHMARKS = new URL('../docs/benchmarks.md', import.meta.url);

/** Replaces docs/benchmarks.md's `<!-- marker:start -->…<!-- marker:end -->` section with `body`. */
function writeSection(marker: string, label: string, body: string): void {
  const section = new RegExp(`<!-- ${marker}:start -->[\\s\\S]*<!-- ${marker}:end -->`);
  const text = `<!-- ${marker}:start -->\n${body}\n<!-- ${marker}:end -->`;
  writeFileSync(
    BENCHMARKS,
    readFileSync(BENCHMARKS, 'utf8').replace(section, () => text),
  );
  console.error(`updated docs/benchmarks.md (${label})`);
}

const acpText = acp ? acpTable(acp) : undefined;
if (acpText) console.log(`\n${acpText}`);
if (!quick && acpText) {
  writeSection(
    'acp',
    'ACP',
    `Measured ${stamp}, the embedded system (\`npm start\`, compiled, store on disk) on Node ${process.version}; flows from a worker thread (bench/acp/flows.ts) of a process that collects on one thread (bench/single-threaded-gc.ts).\n\n${acpText}`,
  );
}
const cartText = acp?.carts.length ? cartTable(acp) : undefined;
if (cartText) console.log(`\n${cartText}`);
if (!quick && cartText) {
  writeSection(
    'carts',
    'carts',
    `Measured ${stamp}, in the same run and on the same system as the checkout sessions it is compared with (the ACP group; bench/acp/flows.ts, \`kind: 'cart'\`), on Node ${process.version}. Latencies in ms from each request's due time.\n\n${cartText}`,
  );
}

if (tokenCheck) {
  const text = tokenCheckTable(tokenCheck);
  console.log(`\n${text}`);
  if (!quick) {
    writeSection(
      'token-check',
      'token check',
      `Measured ${stamp} on Node ${process.version}: in process, gateway/oauth/access-token.ts's verifier in the bench's own process, each call timed alone after 500 not counted (bench/token-check/verifier.ts); end to end, the embedded system (\`npm start\`, compiled), open loop from a worker thread, each latency from its request's due time (bench/token-check/e2e.ts).\n\n${text}`,
    );
  }
}

const ucpText = ucp ? ucpTable(ucp) : undefined;
if (ucpText) console.log(`\n${ucpText}`);
if (!quick && ucpText) {
  writeSection(
    'ucp',
    'UCP',
    `Measured ${stamp}, the embedded system (\`npm start\`, compiled, store on disk) on Node ${process.version}; flows from a worker thread (bench/ucp/flows.ts) of a process that collects on one thread (bench/single-threaded-gc.ts), 10 s per step after 2 s not counted (closed loop: 3 s), each open-loop latency from its due time.\n\n${ucpText}`,
  );
}

if (over) {
  console.log(`\n${over.table}`);
  if (!quick) {
    writeSection(
      'overload',
      'overload',
      `Measured ${stamp} on Node ${process.version}, compiled (bench/tools/overload.ts), \`on\` (the defaults: shedding with fixed limits and budgets and the quotes' busy stretch, 16 extra accept descriptors), \`mean only\` (the same without the busy stretch: SHED_BUSY_STRETCH=none) and \`off\` (the system before issue 48: SHED_*_BUDGET_MS=0, ACCEPT_HANDLES=0) alternated: each start warm and ready, the REST quote's closed-loop maximum (10 connections), then open loop the quote at 50 % of it with 100 agent orders/s beside (the steady reference) and at 150 % with the same orders, 10 s each after 2 s not counted, each latency from its request's due time. "accepted": the requests not answered 503. Latencies in ms.\n\n${over.table}`,
    );
  }
}

if (warm) {
  console.log(`\n${warm}`);
  if (!quick) {
    writeSection(
      'warm-start',
      'warm start',
      `Measured ${stamp} on Node ${process.version}, compiled, fresh data: the embedded system (\`npm start\`; bench/tools/warm-start.ts) and the distributed topology (two gateways over the three subgraph processes, Redis, Postgres; bench/tools/warm-start-distributed.ts), each round alternating \`before\` (the system before issue 48: the warm-up of issue 29, quotes and prices only, no shedding, one accept descriptor: WARM_UP_ORDERS=false SHED_QUOTE_BUDGET_MS=0 SHED_ORDER_BUDGET_MS=0 ACCEPT_HANDLES=0) and \`after\` (the defaults: orders rehearsed in the warm-up, shedding on, the quotes' busy stretch included, 16 extra accept descriptors), both WARM_UP_MS=2000. From the first ready answer of /readyz (distributed: of both gateways), the REST quote at the row's rate with 100 agent orders/s beside it, open loop, every request counted (the generator warmed against a bare route until then); then the same load again as the steady reference. p99s are of the requests not shed (503); the shed share is of all requests due. Latencies in ms.\n\n${warm}`,
    );
  }
}

if (mixed) {
  const text = mixedTable(mixed);
  console.log(`\n${text}`);
  if (!quick) {
    writeSection(
      'mixed',
      'mixed',
      `Measured ${stamp} on Node ${process.version}, compiled; open loop from a worker thread (bench/open-loop/mixed.ts) of a process that collects on one thread (bench/single-threaded-gc.ts), each latency from its request's due time, 10 s per step after 2 s not counted. Latencies in ms.\n\n${text}`,
    );
  }
}

if (catalog) {
  const text = catalogTables(catalog);
  console.log(`\n${text}`);
  if (!quick) {
    writeSection(
      'catalog',
      'catalog',
      `Measured ${stamp} on Node ${process.version}, compiled (\`npm start\`; on PostgreSQL the same process with DATABASE_URL, a fresh schema seeded beforehand), bench/catalog/: GraphQL \`searchProducts\` (first 10: id, title, brand; no quotes) cycling through the labelled queries of bench/catalog/relevance.json; closed loop (10 connections) for the maximum, then open loop at 50 % of it, 10 s after 2 s not counted, each latency from its due time; MiniSearch behind node:http in its own process over the same products, loaded the same way.\n\n${text}`,
    );
  }
}

if (durability) {
  const text = durabilityTable(durability);
  console.log(`\n${text}`);
  if (!quick) {
    writeSection(
      'durability',
      'durability',
      `Measured ${stamp} on Node ${process.version}, compiled, three embedded systems (store on disk, ext4 on the VM's virtio disk) loaded in alternated rounds (bench/durability.ts): EMBEDDED_DB_FSYNC=off is the store as it was before it synced, EMBEDDED_DB_FSYNC=commit a sync per commit (the default before the group commit), on the default (group commit). Closed loop 10 at a time; the p99 open loop from each request's due time.\n\n${text}`,
    );
  }
}

if (hive) {
  console.log(`\n${hive}`);
  if (!quick) {
    writeSection(
      'hive',
      'Hive Gateway',
      `Measured ${stamp} on Node ${process.version}: the 10-line GraphQL cart quote, closed loop, 10 connections, each gateway over the same three compiled subgraph processes, alternated rounds (bench/tools/hive.ts). Load average: the machine's 1-minute figure before–after each load.\n\n${hive}`,
    );
  }
}

// The open-loop group alone also writes its own sections (it takes minutes, the rest longer).
if (!quick && runs('open-loop') && openLoop) {
  const file = new URL('../docs/benchmarks.md', import.meta.url);
  let doc = readFileSync(file, 'utf8').replace(
    /<!-- open-loop:start -->[\s\S]*<!-- open-loop:end -->/,
    `<!-- open-loop:start -->\nMeasured ${stamp}, the system under test on Node ${openLoop.node} (the load generator on ${process.version}); open loop from a worker thread (bench/open-loop/generator.ts) of a process that collects on one thread (bench/single-threaded-gc.ts), each latency from its request's due time.\n\n${openTable}\n<!-- open-loop:end -->`,
  );
  if (runtimeText)
    doc = doc.replace(
      /<!-- runtimes:start -->[\s\S]*<!-- runtimes:end -->/,
      `<!-- runtimes:start -->\nMeasured ${stamp}: closed-loop maxima (10 connections), the two systems started in turn, twice.\n\n${runtimeText}\n<!-- runtimes:end -->`,
    );
  writeFileSync(file, doc);
  writeFileSync(
    new URL('../docs/bench-latency.svg', import.meta.url),
    latencySvg(openLoop, `${stamp}, Node ${openLoop.node}`),
  );
  console.error('updated docs/benchmarks.md (open loop) and docs/bench-latency.svg');
}

if (!quick && !only) {
  const file = new URL('../docs/benchmarks.md', import.meta.url);
  const doc = readFileSync(file, 'utf8');
  const stamp = `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, closed-loop load from a worker thread (bench/loadgen.ts), 10 keep-alive connections unless a row says otherwise.`;
  const next = doc
    .replace(
      /<!-- results:start -->[\s\S]*<!-- results:end -->/,
      `<!-- results:start -->\n${stamp}\n\n${table}\n<!-- results:end -->`,
    )
    .replace(
      /<!-- memory:start -->[\s\S]*<!-- memory:end -->/,
      `<!-- memory:start -->\n${memTable}\n<!-- memory:end -->`,
    );
  writeFileSync(file, next);
  console.error('updated docs/benchmarks.md');
}

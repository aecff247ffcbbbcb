/**
 * docs/dashboard.png: the Grafana dashboard (deploy/grafana/dashboards/agent-commerce.json)
 * rendered from a real Prometheus's answers to its panels' queries, because Grafana itself
 * cannot be installed here (not in Debian's archive, no other download reachable). It is not a
 * Grafana screenshot: each panel's PromQL is sent to Prometheus's /api/v1/query_range and drawn
 * with uPlot in Debian's chromium, in the dashboard's own grid.
 *
 *   npx tsx bench/tools/dashboard-screenshot.ts [--seconds 90]
 *
 * It starts the distributed topology (test harness: pricing, promotions, procurement, one
 * gateway) and Prometheus scraping every process each second with deploy/prometheus/rules.yaml,
 * loads it (quotes over REST and GraphQL, orders, some refused bodies, spend refusals, approvals,
 * webhooks to a receiver and to a closed port), stops pricing two thirds of the way through (the
 * breaker opens), then draws.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { stringify } from 'yaml';
import { startDistributed } from '../../harness/distributed.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const secondsArg = process.argv.indexOf('--seconds');
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 90;
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

interface Target {
  expr: string;
  legendFormat: string;
}
interface Panel {
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  fieldConfig?: {
    defaults?: { unit?: string; thresholds?: { steps: { color: string; value: number | null }[] } };
  };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sys = await startDistributed({
  gateways: 1,
  label: 'shot',
  env: {
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_MAX_ATTEMPTS: '2',
    WEBHOOK_RETRY_BASE_MS: '2000',
    WEBHOOK_RETRY_MAX_DELAY_MS: '4000',
    WEBHOOK_TIMEOUT_MS: '500',
    WEBHOOK_POLL_INTERVAL_MS: '200',
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
    QUOTE_BREAKER_HALF_OPEN_MS: '600000',
  },
});
const dir = mkdtempSync(join(tmpdir(), 'ac-dashboard-'));
let prometheus: ChildProcess | undefined;
const receiver = createHttpServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end());
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
try {
  const roles = ['pricing', 'promotions', 'procurement', 'gateway'];
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '1s' },
      rule_files: [join(root, 'deploy/prometheus/rules.yaml')],
      scrape_configs: sys.processes.map((p, i) => ({
        job_name: roles[i],
        static_configs: [{ targets: [new URL(p.url).host] }],
      })),
    }),
  );
  const port = await freePort();
  const prom = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: 'inherit' },
  );

  const gw = sys.gateways[0] as string;
  const admin = await sys.token(['webhooks:admin', 'spend:admin', 'orders:approve'], 'ops-alice');
  const closed = await freePort();
  const { port: hookPort } = receiver.address() as { port: number };
  for (const url of [`http://127.0.0.1:${hookPort}/hooks`, `http://127.0.0.1:${closed}/hooks`])
    await sys.gql(
      'mutation ($url: String!, $t: [String!]!) { registerWebhookEndpoint(url: $url, eventTypes: $t) { signingSecret } }',
      { token: admin, variables: { url, t: [EventTypes.OrderPlaced, EventTypes.OrderApprovalRequested] } },
    );
  const policy = (subject: string, p: Record<string, string>) =>
    sys.gql('mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }', {
      token: admin,
      variables: { p: { subject, currency: 'USD', period: 'DAY', ...p } },
    });
  await policy(`${AGENT}/tight`, { budget: '50.00' });
  await policy(`${AGENT}/approver`, { budget: '100000.00', approvalAbove: '100.00' });

  const skus = generateCatalog(500)
    .filter((p) => p.prices.USD !== undefined)
    .map((p) => p.sku);
  const order = (agent: string, body: unknown) =>
    fetch(`${gw}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': agent },
      body: JSON.stringify(body),
    }).then((r) => r.arrayBuffer());
  const valid = (budget: number, sku = 'SKU-ABC-000001') => ({
    agent_id: 'agent-0000001',
    sku,
    quantity: 1,
    max_budget_usd: budget,
  });

  const approveOldest = async () => {
    const r = await sys.gql('{ pendingApprovals(first: 1) { nodes { order { orderId } } } }', {
      token: admin,
    });
    const id = (r.data?.pendingApprovals as { nodes: { order: { orderId: string } }[] } | undefined)?.nodes[0]
      ?.order.orderId;
    if (id)
      await sys.gql('mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }', {
        token: admin,
        variables: { id },
      });
  };

  const started = Date.now();
  const until = started + SECONDS * 1000;
  let stopped = false;
  let n = 0;
  const loops = [
    // Quotes: REST and GraphQL, a new SKU now and then (a pricing call), mostly cached ones.
    (async () => {
      while (Date.now() < until) {
        const sku = skus[n++ % 60] as string;
        await Promise.all([
          fetch(`${gw}/cart/quote?line=${sku}:2&line=SKU-ABC-000001:1&currency=USD&region=EU`).then((r) =>
            r.arrayBuffer(),
          ),
          sys.gql(
            `{ cartQuote(input: {lines: [{sku: "${sku}", quantity: 1}], currency: "USD", region: "EU"}) { subtotalDecimal } }`,
          ),
        ]);
        if (!stopped && Date.now() - started > (SECONDS * 1000 * 2) / 3) {
          stopped = true;
          console.log('stopping pricing');
          await sys.processes[0]?.stop();
        }
        if (stopped && n % 5 === 0) n += 60; // new SKUs reach the stopped pricing: fallbacks
        await sleep(20);
      }
    })(),
    // Orders: valid ones, a refused body now and then (422, and a block), spend refusals, approvals.
    (async () => {
      let i = 0;
      while (Date.now() < until) {
        i++;
        await order(`${AGENT}/buyer-${i % 4}`, valid(10));
        if (i % 10 === 0) await order(`${AGENT}/sloppy`, { agent_id: 'x' });
        if (i % 15 === 0) await order(`${AGENT}/tight`, valid(30));
        if (i % 40 === 0) await order(`${AGENT}/approver`, valid(250));
        // Every other pending order is approved a little later: the decision-time panel has points.
        if (i % 80 === 20) await approveOldest();
        await sleep(100);
      }
    })(),
  ];
  await Promise.all(loops);
  await sleep(2000);
  const end = Date.now() / 1000;
  const start = started / 1000;

  const dashboard = JSON.parse(
    readFileSync(join(root, 'deploy/grafana/dashboards/agent-commerce.json'), 'utf8'),
  ) as { panels: Panel[]; title: string };
  const rateInterval = '10s';
  const drawn = [];
  for (const p of dashboard.panels) {
    const series = [];
    for (const t of p.targets ?? []) {
      const expr = t.expr.replaceAll('$__rate_interval', rateInterval);
      const q = new URLSearchParams({ query: expr, start: String(start), end: String(end), step: '2' });
      const r = (await (await fetch(`${prom}/api/v1/query_range?${q}`)).json()) as {
        data?: { result: { metric: Record<string, string>; values: [number, string][] }[] };
        error?: string;
      };
      if (r.error) throw new Error(`${p.title}: ${r.error}`);
      for (const s of r.data?.result ?? [])
        series.push({
          name: t.legendFormat.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => s.metric[k] ?? ''),
          values: s.values.map(([ts, v]) => [ts, Number(v)]),
        });
    }
    drawn.push({ ...p, series });
  }

  const uplot = readFileSync(join(root, 'node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${css}
body{margin:0;background:#111217;color:#ccccdc;font:13px Inter,Helvetica,Arial,sans-serif}
header{padding:10px 16px;font-size:18px;border-bottom:1px solid #2c3235}
header small{color:#8e8e8e;font-size:12px;margin-left:12px}
.grid{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:30px;gap:6px;padding:8px}
.panel{background:#181b1f;border:1px solid #2c3235;border-radius:2px;overflow:hidden;display:flex;flex-direction:column}
.row{grid-column:1/-1;font-size:15px;font-weight:500;padding:4px 2px;align-self:end}
.title{padding:6px 8px;font-weight:500;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.chart{flex:1;min-height:0}
.stat{flex:1;display:flex;align-items:center;justify-content:center;font-size:44px;font-weight:500}
.empty{flex:1;display:flex;align-items:center;justify-content:center;color:#6e6e6e}
.u-legend{font-size:11px;color:#ccccdc}.u-axis{color:#8e8e8e}
</style><script>${uplot}</script></head><body>
<header>${dashboard.title}<small>Rendered from Prometheus query results of the dashboard's panels, not by Grafana (see docs/observability.md). ${new Date(start * 1000).toISOString().slice(0, 16)}Z, ${SECONDS} s of load, pricing stopped at two thirds.</small></header>
<div class="grid" id="grid"></div>
<script>
const panels = ${JSON.stringify(drawn)};
const colors = ['#73bf69','#f2cc0c','#5794f2','#ff9830','#f2495c','#b877d9','#8ab8ff','#fade2a'];
const fmt = (unit, v) => {
  if (v == null || Number.isNaN(v)) return '–';
  if (unit === 's') return v < 1 ? (v * 1000).toFixed(v < 0.01 ? 2 : 0) + ' ms' : v < 120 ? v.toFixed(1) + ' s' : (v / 60).toFixed(0) + ' min';
  if (unit === 'percentunit') return (v * 100).toFixed(2) + ' %';
  if (unit === 'bytes') return (v / 1048576).toFixed(0) + ' MiB';
  if (unit === 'reqps' || unit === 'ops') return v.toFixed(1) + '/s';
  if (unit === 'x') return v.toFixed(2) + '×';
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2);
};
const grid = document.getElementById('grid');
for (const p of panels) {
  const g = p.gridPos;
  const el = document.createElement('div');
  el.style.gridColumn = (g.x + 1) + ' / span ' + g.w;
  el.style.gridRow = (g.y + 1) + ' / span ' + g.h;
  if (p.type === 'row') { el.className = 'row'; el.textContent = p.title; grid.appendChild(el); continue; }
  el.className = 'panel';
  el.innerHTML = '<div class="title"></div>';
  el.firstChild.textContent = p.title;
  grid.appendChild(el);
  const unit = p.fieldConfig?.defaults?.unit;
  const body = document.createElement('div');
  el.appendChild(body);
  if (!p.series.length) { body.className = 'empty'; body.textContent = 'No data'; continue; }
  if (p.type === 'stat') {
    const vals = p.series[0].values; const v = vals[vals.length - 1][1];
    const steps = p.fieldConfig?.defaults?.thresholds?.steps ?? [{ color: 'green', value: null }];
    let color = steps[0].color; for (const s of steps) if (s.value !== null && v >= s.value) color = s.color;
    body.className = 'stat'; body.style.color = { green: '#73bf69', orange: '#ff9830', red: '#f2495c' }[color] ?? color;
    body.textContent = fmt(unit, v); continue;
  }
  body.className = 'chart';
  const xs = [...new Set(p.series.flatMap((s) => s.values.map((v) => v[0])))].sort((a, b) => a - b);
  const data = [xs, ...p.series.map((s) => { const m = new Map(s.values); return xs.map((x) => m.has(x) ? m.get(x) : null); })];
  const rect = body.getBoundingClientRect();
  new uPlot({
    width: Math.floor(rect.width), height: Math.max(80, Math.floor(rect.height) - 28),
    legend: { live: false },
    axes: [{ stroke: '#8e8e8e', grid: { stroke: '#2c3235' } }, { stroke: '#8e8e8e', grid: { stroke: '#2c3235' }, size: 60, values: (u, ticks) => ticks.map((t) => fmt(unit, t)) }],
    series: [{}, ...p.series.map((s, i) => ({ label: s.name, stroke: colors[i % colors.length], width: 1.5, spanGaps: true, value: (u, v) => fmt(unit, v) }))],
  }, data, body);
}
window.done = true;
</script></body></html>`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.setContent(html);
    await page.waitForFunction(() => (globalThis as unknown as { done?: boolean }).done === true);
    await page.screenshot({ path: join(root, 'docs/dashboard.png'), fullPage: true });
    console.log(`docs/dashboard.png: ${drawn.filter((p) => p.type !== 'row').length} panels`);
  } finally {
    await browser.close();
  }
} finally {
  prometheus?.kill('SIGTERM');
  receiver.close();
  await sys.close();
  rmSync(dir, { recursive: true, force: true });
}

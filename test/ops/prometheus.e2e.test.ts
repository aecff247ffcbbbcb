/**
 * The alerts seen by a real Prometheus (Debian's `prometheus` binary) scraping the running
 * distributed system (test harness processes: pricing, promotions, procurement, one gateway):
 * pricing stopped opens the quote breaker, and a webhook endpoint on a closed port makes its
 * deliveries die; both alerts are then firing in Prometheus's /api/v1/alerts, and were not
 * before.
 *
 * The SLOs' recording rules get values from the same traffic, so their label selectors match
 * what the processes write.
 *
 * Prometheus runs with a 1 s scrape and evaluation interval and a copy of
 * deploy/prometheus/rules.yaml in which every `for:` is 2 s (the real ones wait a minute or
 * more, which a test should not); the expressions, labels and annotations are the file's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type DistributedSystem, startDistributed } from '../../harness/distributed.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import { waitFor } from '../webhooks/support.ts';
import { requirePrometheusBinary } from './binaries.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/prometheus-e2e';

/** A port nothing listens on now (the kernel's pick, closed again). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

let sys: DistributedSystem;
let prometheus: ChildProcess | undefined;
let promUrl = '';
let dir = '';

beforeAll(async () => {
  requirePrometheusBinary('prometheus');
  sys = await startDistributed({
    gateways: 1,
    label: 'prom',
    env: {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_MAX_ATTEMPTS: '1',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      // The breaker stays open for the test instead of trying pricing again every 5 s.
      QUOTE_BREAKER_HALF_OPEN_MS: '600000',
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'ac-prometheus-'));
  const rules = parse(readFileSync(join(root, 'deploy/prometheus/rules.yaml'), 'utf8')) as {
    groups: { rules: { for?: string }[] }[];
  };
  for (const g of rules.groups) for (const r of g.rules) if (r.for) r.for = '2s';
  writeFileSync(join(dir, 'rules.yaml'), stringify(rules));
  const roles = ['pricing', 'promotions', 'procurement', 'gateway'];
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '1s' },
      rule_files: [join(dir, 'rules.yaml')],
      scrape_configs: sys.processes.map((p, i) => ({
        job_name: roles[i] ?? `process-${i}`,
        static_configs: [{ targets: [new URL(p.url).host] }],
      })),
    }),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  prometheus.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  await waitFor(
    `every target up in Prometheus (its log: ${log})`,
    async () => {
      const r = await fetch(`${promUrl}/api/v1/targets`).catch(() => undefined);
      if (!r?.ok) return false;
      const { data } = (await r.json()) as { data: { activeTargets: { health: string }[] } };
      return (
        data.activeTargets.length === sys.processes.length &&
        data.activeTargets.every((t) => t.health === 'up')
      );
    },
    30_000,
  );
}, 120_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  await sys?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function alerts(): Promise<Alert[]> {
  const r = await fetch(`${promUrl}/api/v1/alerts`);
  return ((await r.json()) as { data: { alerts: Alert[] } }).data.alerts;
}
const firing = async (name: string) =>
  (await alerts()).filter((a) => a.labels.alertname === name && a.state === 'firing');

describe('alerts in a real Prometheus scraping the distributed system', () => {
  it('fire when pricing stops (the quote breaker opens) and when webhook deliveries die on a closed port', async () => {
    // Evaluated, and quiet, before anything is provoked.
    await waitFor('the rules evaluated once', async () => {
      const r = await fetch(
        `${promUrl}/api/v1/query?query=${encodeURIComponent('edge_dependency_breaker_open')}`,
      );
      const { data } = (await r.json()) as { data: { result: unknown[] } };
      return data.result.length > 0;
    });
    expect(await firing('QuoteDependencyBreakerOpen')).toEqual([]);
    expect(await firing('WebhookDeliveriesDead')).toEqual([]);

    // A webhook endpoint on a port nothing listens on; an order's OrderPlaced goes there.
    const closed = await freePort();
    const admin = await sys.token(['webhooks:admin']);
    const reg = await sys.gql(
      'mutation ($url: String!, $t: [String!]!) { registerWebhookEndpoint(url: $url, eventTypes: $t) { signingSecret } }',
      { token: admin, variables: { url: `http://127.0.0.1:${closed}/hooks`, t: [EventTypes.OrderPlaced] } },
    );
    expect(reg.errors).toBeUndefined();
    const gateway = sys.gateways[0] as string;
    const order = await fetch(`${gateway}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
      body: JSON.stringify({
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-000001',
        quantity: 1,
        max_budget_usd: 5,
      }),
    });
    expect(order.status).toBe(201);

    // Pricing stops; quotes of SKUs not cached yet call it, fail, and open its breaker.
    const pricing = sys.processes[0];
    expect(new URL(pricing?.url ?? '').port).toBeTruthy();
    await pricing?.stop();
    const skus = generateCatalog(500)
      .filter((p) => p.prices.USD !== undefined)
      .map((p) => p.sku);
    const sources: string[] = [];
    for (const sku of skus.slice(100, 110)) {
      const r = await fetch(`${gateway}/cart/quote?line=${sku}:1&currency=USD&region=EU`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { lines: { source: string }[] };
      sources.push(body.lines[0]?.source ?? '');
    }
    expect(sources.every((s) => s !== 'live')).toBe(true);

    const breaker = await waitFor(
      'QuoteDependencyBreakerOpen firing',
      async () => {
        const a = await firing('QuoteDependencyBreakerOpen');
        return a.length ? a : undefined;
      },
      30_000,
    );
    expect(breaker.map((a) => a.labels)).toEqual([
      { alertname: 'QuoteDependencyBreakerOpen', dependency: 'pricing', severity: 'page' },
    ]);
    expect(breaker[0]?.annotations.runbook_url).toBe('docs/runbooks.md#quotedependencybreakeropen');

    const dead = await waitFor(
      'WebhookDeliveriesDead firing',
      async () => {
        const a = await firing('WebhookDeliveriesDead');
        return a.length ? a : undefined;
      },
      30_000,
    );
    expect(dead[0]?.labels).toMatchObject({ alertname: 'WebhookDeliveriesDead', severity: 'ticket' });
    expect(dead[0]?.annotations.runbook_url).toBe('docs/runbooks.md#webhookdeliveriesdead');

    // The SLO ratios have a sample: the rules' route and outcome selectors match the labels the
    // processes really write (a misspelt route would leave the vector empty, and the SLO silent).
    // Its value may be NaN: a counter that rose only before its series' first scrape has a rate
    // of 0 over the window, and 0/0 is NaN.
    for (const slo of [
      'quote_availability',
      'quote_latency',
      'order_availability',
      'order_latency',
      'webhook_delivery',
    ])
      await waitFor(`slo:${slo}:error_ratio_rate5m has a sample`, async () => {
        const q = encodeURIComponent(`slo:${slo}:error_ratio_rate5m`);
        const r = (await (await fetch(`${promUrl}/api/v1/query?query=${q}`)).json()) as {
          data: { result: { metric: Record<string, string> }[] };
        };
        return r.data.result.length === 1 && r.data.result[0]?.metric.slo === slo;
      });
  }, 90_000);
});

/**
 * Memory of the processes a user runs (issue 11's budgets), measured from outside as RSS:
 *   - `npm start` (the whole process tree: npm, its shell, node) right after it listens, and
 *     after a mixed load (GraphQL and REST quotes, prices, agent orders, promotion evaluations);
 *   - the distributed topology's processes (compiled), each after a quote load.
 * Heap is the process's own `nodejs_heap_size_used_bytes` from /metrics.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCommand, startProcess } from '../harness/processes.ts';
import { QUOTE_REQUESTS } from '../harness/requests.ts';
import { gql, testConfig } from '../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../harness/tools-promotion.ts';
import { mintDevToken } from '../lib/auth/jwt.ts';
import type { HttpRequestSpec } from './harness.ts';
import { load } from './loadgen.ts';
import { startSubgraphProcesses } from './peers/subgraph-processes.ts';

export interface MemoryRow {
  name: string;
  rssMb: number;
  heapMb?: number;
  goalMb: number;
}

/**
 * RSS of the `node` process that `npm start` runs (npm's own process not counted), in MB. Found
 * by its command line: Node 24 names its main thread `MainThread`, so the process name says
 * `node` only on older versions.
 */
export function nodeRssMb(npmPid: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (parent === npmPid && /(^|\/)node$/.test(argv0)) {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
        return Number(m?.[1] ?? 0) / 1024;
      }
    } catch {
      // the process ended while we looked
    }
  }
  return Number.NaN;
}

/** VmRSS of a process and all its descendants, in MB (Linux /proc). */
export function treeRssMb(pid: number): number {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parentOf) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  let kb = 0;
  for (const p of tree) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      kb += Number(m?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

async function heapMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^nodejs_heap_size_used_bytes (\S+)/m.exec(text);
  return Number(m?.[1] ?? 0) / 1e6;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function mixedLoad(): HttpRequestSpec[] {
  const order = (i: number): HttpRequestSpec => ({
    method: 'POST',
    path: '/v2/orders',
    headers: {
      'content-type': 'application/json',
      'x-spiffe-id': `spiffe://example.org/ns/ai/sa/procurement-agent/bench-${i}`,
    },
    body: JSON.stringify({
      agent_id: `agent-bench-${i}`,
      sku: 'SKU-TOL-000001',
      quantity: 2,
      max_budget_usd: 99.5,
    }),
  });
  const price = (i: number): HttpRequestSpec => ({
    method: 'POST',
    path: '/v1/prices/calculate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sku: `SKU-TOL-${String((i % 500) + 1).padStart(6, '0')}`,
      currency: 'USD',
      region: ['EU', 'US', 'APAC'][i % 3],
      customerSegment: i % 4 ? 'STANDARD' : 'VIP',
      inventoryLevel: (i * 37) % 900,
    }),
  });
  const evaluate: HttpRequestSpec = {
    method: 'POST',
    path: '/v1/promotions/evaluate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      currency: 'USD',
      lines: [
        { sku: 'SKU-TOL-000001', category: 'tools', quantity: 3, unitPrice: 19.99 },
        { sku: 'SKU-BOK-000001', category: 'books', quantity: 2, unitPrice: '8.50' },
      ],
    }),
  };
  const out: HttpRequestSpec[] = [];
  for (let i = 0; i < 200; i++) {
    out.push(QUOTE_REQUESTS.graphql(), QUOTE_REQUESTS.rest(), price(i), order(i % 50), evaluate);
  }
  return out;
}

async function addRule(url: string, dataDir: string): Promise<void> {
  const token = await mintDevToken(testConfig({ DATA_DIR: dataDir }), {
    subject: 'bench',
    roles: ['promotions:admin'],
  });
  const res = await gql(url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
  if (res.errors) throw new Error(JSON.stringify(res.errors));
}

export async function measureMemory(quick: boolean): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  // Embedded: the README's own command on a fresh data directory (its first start).
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-mem-'));
  // `npm start` exactly as the README says: its process tree is what is measured.
  const npm = await startCommand(
    'npm start',
    'npm',
    ['start'],
    { DATA_DIR: dataDir },
    { timeoutMs: 180_000 },
  );
  const { child, url } = npm;
  try {
    await sleep(3000);
    rows.push({
      name: "`npm start`'s node process, first start, right after listening",
      rssMb: nodeRssMb(child.pid as number),
      heapMb: await heapMb(url),
      goalMb: 400,
    });
    await addRule(url, dataDir);
    const seconds = quick ? 5 : 60;
    await load({ url, requests: mixedLoad(), connections: 10, seconds });
    rows.push({
      name: `\`npm start\`'s node process, after ${seconds} s of mixed load (quotes, prices, orders, promotions)`,
      rssMb: nodeRssMb(child.pid as number),
      heapMb: await heapMb(url),
      goalMb: 400,
    });
  } finally {
    await npm.stop();
  }

  // Distributed: compiled processes over Redis and PostgreSQL, after a quote load.
  const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: '10000' });
  const gateway = await startProcess(
    'gateway',
    {
      ...subgraphs.env,
      TOPOLOGY: 'distributed',
      LOG_LEVEL: 'info',
      PRICING_URL: subgraphs.urls.pricing,
      PROMOTIONS_URL: subgraphs.urls.promotions,
      PROCUREMENT_URL: subgraphs.urls.procurement,
    },
    120_000,
    { compiled: true },
  );
  try {
    await addRule(gateway.url, subgraphs.env.DATA_DIR as string);
    const requests = [QUOTE_REQUESTS.graphql(), QUOTE_REQUESTS.rest()];
    await load({ url: gateway.url, requests, connections: 10, seconds: quick ? 3 : 20 });
    rows.push({
      name: 'distributed gateway process, after a quote load',
      rssMb: treeRssMb(gateway.child.pid as number),
      heapMb: await heapMb(gateway.url),
      goalMb: 200,
    });
    for (const [name, proc] of Object.entries(subgraphs.processes)) {
      rows.push({
        name: `${name} subgraph process, after a quote load`,
        rssMb: treeRssMb(proc.child.pid as number),
        heapMb: await heapMb(proc.url),
        goalMb: 150,
      });
    }
  } finally {
    await gateway.stop();
    await subgraphs.close();
  }
  return rows;
}

export function memoryTable(rows: MemoryRow[]): string {
  const lines = ['| process | RSS MB | heap used MB | goal (RSS) | met? |', '|---|---|---|---|---|'];
  for (const r of rows) {
    lines.push(
      `| ${r.name} | ${r.rssMb.toFixed(0)} | ${r.heapMb === undefined ? '—' : r.heapMb.toFixed(0)} | ≤ ${r.goalMb} MB | ${r.rssMb <= r.goalMb ? 'yes' : 'no'} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The first requests after ready, one at a time: starts the compiled embedded system, waits for
 * /readyz, then times each hot path's first few requests in turn (REST quote, GraphQL quote,
 * price, agent order), to show what a cold path pays on its first use.
 *   npm run build && tsx bench/tools/first-requests.ts [ENV=value ...]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess } from '../../harness/processes.ts';
import { orderRequests, priceRequests, QUOTE_CATALOG_SIZE, QUOTE_REQUESTS } from '../../harness/requests.ts';
import type { HttpRequestSpec } from '../harness.ts';

const env = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.includes('='))
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);
const t0 = performance.now();
const sys = await startProcess(
  'embedded',
  { DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-first-')), CATALOG_SIZE: String(QUOTE_CATALOG_SIZE), ...env },
  120_000,
  { compiled: true },
);
console.log(`listening after ${(performance.now() - t0).toFixed(0)} ms`);
try {
  while ((await fetch(`${sys.url}/readyz`).catch(() => undefined))?.status !== 200)
    await new Promise((r) => setTimeout(r, 5));
  console.log(`ready after ${(performance.now() - t0).toFixed(0)} ms`);
  const send = async (r: HttpRequestSpec) => {
    const t = performance.now();
    const res = await fetch(`${sys.url}${r.path}`, {
      method: r.method ?? 'GET',
      headers: r.headers,
      ...(r.body ? { body: r.body } : {}),
    });
    await res.arrayBuffer();
    return { ms: performance.now() - t, status: res.status };
  };
  const paths: [string, HttpRequestSpec][] = [
    ['REST quote', QUOTE_REQUESTS.rest()],
    ['GraphQL quote', QUOTE_REQUESTS.graphql()],
    ['price', priceRequests()[0] as HttpRequestSpec],
    ['agent order', orderRequests()[0] as HttpRequestSpec],
  ];
  for (const [name, r] of paths) {
    const times: string[] = [];
    for (let i = 0; i < 5; i++) {
      const x = await send(r);
      times.push(`${x.ms.toFixed(1)}${x.status >= 300 ? `(${x.status})` : ''}`);
    }
    console.log(`${name.padEnd(14)} first five: ${times.join(' ')} ms`);
  }
} finally {
  await sys.stop();
}

/**
 * `npx tsx ci/smoke.ts [--node <binary>]`: starts the compiled system (dist/, as `npm start` runs
 * it) on the given Node binary, on a fresh data directory and a free port, and checks what a
 * user tries first: a price, an agent order, a REST and a GraphQL cart quote, /metrics, then a
 * clean SIGTERM shutdown. CI runs it on Node 24 (the image's runtime) while the suite runs on the
 * machine's Node. Prints one line per check and `smoke: N passed, N failed`; exits 1 on a failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const node = args.includes('--node') ? (args[args.indexOf('--node') + 1] as string) : process.execPath;
const data = mkdtempSync(join(tmpdir(), 'ac-smoke-'));

function start(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(node, ['dist/gateway/main.js'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: data,
      LOG_LEVEL: 'info',
      APOLLO_TELEMETRY_DISABLED: '1',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" within 60 s:\n${out}`)), 60_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"msg":"listening on (http[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string, output: () => out });
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${out}`));
    });
  });
}

const json = { 'content-type': 'application/json' };
const checks: [string, (url: string) => Promise<string | undefined>][] = [
  [
    'POST /v1/prices/calculate answers 200 with both modifiers (VIP, inventory 5)',
    async (url) => {
      const res = await fetch(`${url}/v1/prices/calculate`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          sku: 'SKU-ABC-000001',
          currency: 'USD',
          region: 'EU',
          customerSegment: 'VIP',
          inventoryLevel: 5,
        }),
      });
      const body = (await res.json()) as { appliedModifiers?: string[] };
      if (res.status !== 200) return `status ${res.status}`;
      const mods = body.appliedModifiers?.join(',');
      return mods === 'SCARCITY_SURCHARGE_15,VIP_SEGMENT_DISCOUNT' ? undefined : `modifiers ${mods}`;
    },
  ],
  [
    'POST /v2/orders answers 201 APPROVED',
    async (url) => {
      const res = await fetch(`${url}/v2/orders`, {
        method: 'POST',
        headers: { ...json, 'x-spiffe-id': 'spiffe://example.org/ns/ai/sa/procurement-agent' },
        body: JSON.stringify({
          agent_id: 'agent-smoke-01',
          sku: 'SKU-ABC-000001',
          quantity: 3,
          max_budget_usd: 250.75,
        }),
      });
      const body = (await res.json()) as { status?: string };
      return res.status === 201 && body.status === 'APPROVED'
        ? undefined
        : `${res.status} ${JSON.stringify(body)}`;
    },
  ],
  [
    'GET /cart/quote answers 200 with a quote token',
    async (url) => {
      const res = await fetch(
        `${url}/cart/quote?line=SKU-ABC-000001:2&line=SKU-ELC-000004:3&currency=USD&region=EU`,
      );
      const body = (await res.json()) as { quoteToken?: string };
      return res.status === 200 && body.quoteToken ? undefined : `${res.status} ${JSON.stringify(body)}`;
    },
  ],
  [
    'POST /graphql cartQuote answers data without errors',
    async (url) => {
      const query =
        '{ cartQuote(input: {lines: [{sku: "SKU-ABC-000001", quantity: 2}], currency: "USD", region: "EU"}) { lines { sku } quoteToken } }';
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ query }),
      });
      const body = (await res.json()) as { data?: { cartQuote?: { quoteToken?: string } }; errors?: unknown };
      return res.status === 200 && !body.errors && body.data?.cartQuote?.quoteToken
        ? undefined
        : `${res.status} ${JSON.stringify(body)}`;
    },
  ],
  [
    'GET /metrics exposes the runtime metrics',
    async (url) => {
      const res = await fetch(`${url}/metrics`);
      const text = await res.text();
      return res.status === 200 && /nodejs_eventloop_lag/.test(text) ? undefined : `status ${res.status}`;
    },
  ],
];

let passed = 0;
let failed = 0;
const report = (ok: boolean, name: string, why?: string) => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${why ? `: ${why}` : ''}`);
};

try {
  const version = await new Promise<string>((resolve) => {
    const v = spawn(node, ['--version']);
    let s = '';
    v.stdout.on('data', (c: Buffer) => {
      s += c.toString();
    });
    v.on('exit', () => resolve(s.trim()));
  });
  console.log(`smoke: the compiled system on Node ${version} (${node})`);
  const system = await start();
  report(true, `starts and listens on ${system.url}`);
  for (const [name, check] of checks) {
    const why = await check(system.url).catch((e: Error) => e.message);
    report(why === undefined, name, why);
  }
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      system.child.kill('SIGKILL');
      resolve(null);
    }, 20_000);
    system.child.removeAllListeners('exit');
    system.child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
    system.child.kill('SIGTERM');
  });
  report(code === 0, 'SIGTERM shuts it down with exit code 0', code === 0 ? undefined : `exit ${code}`);
  if (code !== 0) console.log(system.output().slice(-4000));
} catch (err) {
  report(false, 'starts and listens', (err as Error).message);
} finally {
  rmSync(data, { recursive: true, force: true });
}
console.log(`smoke: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

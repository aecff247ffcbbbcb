/**
 * Every shell example of README.md and docs/*.md runs here, as written, against the started
 * system (`npm start` in process, on a free port): each `curl` must get the answer the example
 * promises (2xx, or the status its `# NNN` comment names; GraphQL without errors), each `npm`
 * command must name a script that exists, and each `NAME=value` a setting the processes read.
 * So a documented command cannot drift from the API.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type ProfileServer, platformProfile, startProfileServer } from '../../harness/ucp-platform.ts';
import { CONFIG_VARIABLES } from '../../lib/config.ts';
import { TRACING_VARIABLES } from '../../lib/telemetry/config.ts';
import { allExamples, assignedNames, type Example, inlineQueryTemplates, requestLine } from './examples.ts';

type Parameter = { name: string; in: string } | { $ref: string };
type OpenApi = {
  paths?: Record<string, Record<string, { parameters?: Parameter[] } | undefined>>;
  components?: { parameters?: Record<string, { name: string; in: string }> };
};

/** A parameter, or the shared one its local `$ref` names (`#/components/parameters/…`). */
const parameterOf = (doc: OpenApi, p: Parameter) =>
  '$ref' in p ? doc.components?.parameters?.[p.$ref.replace('#/components/parameters/', '')] : p;

const root = fileURLToPath(new URL('../../', import.meta.url));
const examples = allExamples(root);
/** Names an example may assign that are not settings: shell variables and the role switches. */
const SHELL_NAMES = new Set(['TOKEN', 'TOPOLOGY', 'ROLE', 'APOLLO_TELEMETRY_DISABLED', 'NODE_OPTIONS']);

/** The OpenAPI documents, parsed once for every inline request template. */
const openApiDocs = readdirSync(join(root, 'schemas/openapi')).map(
  (f) => parse(readFileSync(join(root, 'schemas/openapi', f), 'utf8')) as OpenApi,
);

/**
 * What the prelude's `npm` reads once per file instead of starting node per call: package.json's
 * scripts (AC_SCRIPTS), and a directory for the tokens `npm run -s token` printed (AC_TOKENS).
 */
let shared: string;
let scriptsFile: string;
let tokensDir: string;

let sys: TestSystem;
let profiles: ProfileServer;
/** docs/ucp.md's platform profile (https://platform.example/ucp/profile.json), served on loopback. */
let ucpProfile: string;
beforeAll(async () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const lines = Object.entries(scripts).map(([name, line]) => `${name}\t${line}`);
  // One script a line, its name and command line split by the tab: neither may hold one.
  for (const line of lines) expect(line.split(/[\t\n]/)).toHaveLength(2);
  shared = mkdtempSync(join(tmpdir(), 'ac-docs-shared-'));
  scriptsFile = join(shared, 'scripts.tsv');
  writeFileSync(scriptsFile, `${lines.join('\n')}\n`);
  tokensDir = join(shared, 'tokens');
  mkdirSync(tokensDir);
  // `npm start`'s defaults (store on disk under DATA_DIR), on a free port, with a catalog of
  // 2,000 of the generator's products instead of 10,000: every SKU the examples name is among
  // them, and the seed was a quarter of this file's time (tests 45 → 31 s, one run each, same
  // sitting); UCP profiles may be fetched over http from loopback, where the walk-through's
  // platform is.
  sys = await startEmbedded({
    CATALOG_SIZE: '2000',
    EMBEDDED_DB: 'disk',
    UCP_PROFILE_ALLOW_INSECURE: 'true',
  });
  profiles = await startProfileServer();
  ucpProfile = profiles.set(
    '/ucp/profile.json',
    platformProfile({
      capabilities: [
        'checkout',
        'order',
        'discount',
        'fulfillment',
        'cart',
        'catalog.search',
        'catalog.lookup',
      ],
    }),
  );
}, 120_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
  if (shared) rmSync(shared, { recursive: true, force: true });
});

interface Call {
  status: number;
  url: string;
  body: string;
}

/** Runs an example in bash (asynchronously: the system answering it runs in this process). */
async function runShell(example: Example): Promise<{ code: number | null; stderr: string; calls: Call[] }> {
  const log = mkdtempSync(join(tmpdir(), 'ac-docs-'));
  try {
    const child = spawn('bash', ['-c', `source "${join(root, 'test/docs/prelude.sh')}"\n${example.text}`], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 120_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        AC_ROOT: root,
        AC_HOSTPORT: new URL(sys.url).host,
        AC_LOG: log,
        AC_UCP_PROFILE: ucpProfile,
        AC_SCRIPTS: scriptsFile,
        AC_TOKENS: tokensDir,
        DATA_DIR: sys.config.DATA_DIR,
        LOG_LEVEL: 'silent',
        APOLLO_TELEMETRY_DISABLED: '1',
      },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const calls = readdirSync(log)
      .filter((f) => /^call\.\d+$/.test(f))
      .sort()
      .map((f) => {
        const [status = '0', url = ''] = readFileSync(join(log, f), 'utf8').trim().split(' ');
        return { status: Number(status), url, body: readFileSync(join(log, `${f}.body`), 'utf8') };
      });
    return { code, stderr, calls };
  } finally {
    rmSync(log, { recursive: true, force: true });
  }
}

/** The statuses an example's comments promise (`# 201 …`, `# 200, X-Cache: MISS`), in order. */
const promised = (text: string): number[] =>
  [...text.matchAll(/^\s*#\s*([1-5]\d\d)\b/gm)].map((m) => Number(m[1]));

/** A curl body with headers (`-i`) or without, as JSON. */
const jsonOf = (body: string): unknown => JSON.parse(body.slice(body.search(/[[{]/)));

describe('the documentation examples', () => {
  it('finds the examples of the README and of every docs page that has some', () => {
    const files = new Set(examples.map((e) => e.where.split(':')[0]));
    expect(files).toEqual(
      new Set([
        'README.md',
        'docs/acp.md',
        'docs/acp-keys.md',
        'docs/ap2.md',
        'docs/carts.md',
        'docs/catalog.md',
        'docs/audit-proofs.md',
        'docs/deployment.md',
        'docs/edge.md',
        'docs/identity-linking.md',
        'docs/operator-api.md',
        'docs/observability.md',
        'docs/mcp.md',
        'docs/pricing.md',
        'docs/procurement.md',
        'docs/promotions.md',
        'docs/signatures.md',
        'docs/webhooks.md',
        'docs/spend.md',
        'docs/ucp.md',
        'docs/ucp-webhooks.md',
      ]),
    );
    expect(examples.filter((e) => /\bcurl\b/.test(e.text)).length).toBeGreaterThanOrEqual(4);
  });

  it.each(examples.filter((e) => e.kind === 'shell').map((e) => [e.where, e] as const))(
    '%s runs as written against the started system',
    async (_where, example) => {
      for (const name of assignedNames(example.text))
        expect(
          [...CONFIG_VARIABLES, ...TRACING_VARIABLES, ...SHELL_NAMES],
          `${example.where} sets ${name}`,
        ).toContain(name);
      const { code, stderr, calls } = await runShell(example);
      expect(code, stderr).toBe(0);
      const curls = (example.text.match(/^\s*(?:\w+=\$\()?curl\b/gm) ?? []).length;
      expect(calls).toHaveLength(curls);
      const expected = promised(example.text);
      calls.forEach((call, i) => {
        const status = expected.length === calls.length ? expected[i] : undefined;
        if (status !== undefined) expect(call.status, `${call.url}\n${call.body}`).toBe(status);
        else expect(call.status, `${call.url}\n${call.body}`).toBeGreaterThanOrEqual(200);
        expect(call.status, `${call.url}\n${call.body}`).toBeLessThan(300);
        if (new URL(call.url).pathname === '/graphql') {
          const body = jsonOf(call.body) as { errors?: unknown[]; data?: unknown };
          expect(body.errors, `${call.url}\n${call.body}`).toBeUndefined();
          expect(body.data).toBeTruthy();
        }
      });
    },
    180_000,
  );

  it.each(examples.filter((e) => e.kind === 'request').map((e) => [e.where, e] as const))(
    '%s (a request line) answers 2xx',
    async (_where, example) => {
      const { method, path } = requestLine(example.text);
      const res = await fetch(`${sys.url}${path}`, { method });
      expect(res.status, await res.clone().text()).toBe(200);
    },
  );

  it.each(inlineQueryTemplates(root).map((t) => [t.where, t] as const))(
    '%s: an inline request template names only parameters its OpenAPI operation declares',
    (_where, t) => {
      const declared = openApiDocs
        .flatMap((doc) => (doc.paths?.[t.path]?.[t.method]?.parameters ?? []).map((p) => parameterOf(doc, p)))
        .filter((p) => p?.in === 'query')
        .map((p) => p?.name);
      expect(declared.length, `${t.method.toUpperCase()} ${t.path} in schemas/openapi`).toBeGreaterThan(0);
      for (const name of t.params) expect(declared, `${t.where}: ${name}=`).toContain(name);
    },
  );

  it('would notice a drifted parameter: the old README quote (segment=, customer=) is refused', async () => {
    const res = await fetch(
      `${sys.url}/cart/quote?line=SKU-ABC-000001:2&currency=USD&region=EU&segment=VIP&customer=c-1`,
    );
    expect(res.status).toBe(422);
  });
});

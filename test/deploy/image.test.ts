/**
 * The container image, as far as this machine can check it without a Docker daemon: the
 * Dockerfile's recipe, and the start command it runs, run against the compiled output laid out
 * as the runtime stage lays it out (dist/ and package.json, no sources), as an unprivileged user
 * that can write only DATA_DIR and /tmp (what a read-only root filesystem leaves).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ServiceProcess,
  startCommand,
  startEnv,
  startFlags,
  testJitFlags,
} from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { parseDockerfile, stages } from './dockerfile.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const runtime = stages(dockerfile).at(-1) ?? [];
const entrypoint = JSON.parse(runtime.find((i) => i.op === 'ENTRYPOINT')?.args ?? '[]') as string[];
const imageEnv = Object.fromEntries(
  runtime
    .filter((i) => i.op === 'ENV')
    .flatMap((i) => [...i.args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1], m[2]])),
) as Record<string, string>;
const UNPRIVILEGED = 65534;

let stage: string;
let app: string;
let pg: Awaited<ReturnType<typeof freshPostgres>>;

beforeAll(async () => {
  // What CI's `npm run build` made; rebuilt here only when sources are newer.
  const build = spawnSync(process.execPath, [join(root, 'scripts/ensure-build.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  stage = mkdtempSync(join(tmpdir(), 'ac-image-'));
  chmodSync(stage, 0o755); // readable, not writable, by the unprivileged user (like /app)
  app = join(stage, 'app');
  mkdirSync(app);
  cpSync(join(root, 'dist'), join(app, 'dist'), { recursive: true });
  cpSync(join(root, 'package.json'), join(app, 'package.json'));
  renameSync(installProductionDependencies(), join(app, 'node_modules'));
  pg = await freshPostgres('image');
}, 300_000);

afterAll(async () => {
  await pg?.drop();
  // The staged production node_modules: many thousand files, slow to remove on a loaded disk.
  if (stage) rmSync(stage, { recursive: true, force: true });
}, 120_000);

/**
 * The image's deps stage, here: the files its COPY instructions take from the build context, then
 * `npm ci --omit=dev` from the npm cache (the checkout's own `npm ci` filled it; nothing is
 * downloaded). It also proves the image needs no devDependency at run time, and that what the
 * install runs (scripts, patches) works without one.
 *
 * As Docker's layer cache does for that RUN, the result is kept and reused while its inputs are
 * the same: the bytes of every file the stage copies, the RUN line, and the npm, Node and platform
 * that ran it (productionInstall below). The install is the suite's most expensive step (26 CPU s
 * alone, 55 s beside the other files, 37,840 files); a changed lockfile, patch or Dockerfile
 * line installs again. The staged copy is hard links into that kept tree, owned by this user
 * and readable by everyone, as the image's layer is, so the unprivileged user can load it
 * wherever the checkout lives (a symlink into a checkout or a home under a 0700 directory could
 * not be followed).
 */
function installProductionDependencies(): string {
  const deps = stages(dockerfile).find((s) =>
    s.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args)),
  );
  expect(deps, 'a stage that runs npm ci --omit=dev').toBeDefined();
  const kept = productionInstall(deps ?? []);
  const dir = join(stage, 'deps');
  mkdirSync(dir);
  const link = spawnSync('cp', ['-al', join(kept, 'node_modules'), join(dir, 'node_modules')], {
    encoding: 'utf8',
  });
  expect(link.status, link.stderr).toBe(0);
  chmodSync(dir, 0o755);
  return join(dir, 'node_modules');
}

/** The deps stage's node_modules for these inputs: kept from an earlier run, or installed now. */
function productionInstall(deps: ReturnType<typeof stages>[number]): string {
  const copies = deps
    .filter((i) => i.op === 'COPY' && !i.args.startsWith('--'))
    .map((copy) => {
      const [dest = '', ...sources] = copy.args.split(/\s+/).reverse();
      return { dest, sources: sources.reverse() };
    });
  const key = createHash('sha256');
  key.update(`${process.platform} ${process.arch} node ${process.version} npm ${npmVersion()}\n`);
  for (const run of deps.filter((i) => i.op === 'RUN')) key.update(`RUN ${run.args}\n`);
  for (const { dest, sources } of copies)
    for (const source of sources)
      for (const file of filesUnder(join(root, source))) {
        key.update(`COPY ${dest} ${relative(root, file)}\n`);
        key.update(readFileSync(file));
      }
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agent-commerce', 'image-deps');
  const kept = join(cache, key.digest('hex').slice(0, 24));
  if (existsSync(join(kept, 'node_modules'))) {
    const now = new Date();
    utimesSync(kept, now, now);
    return kept;
  }

  mkdirSync(cache, { recursive: true });
  // Each kept install is ~330 MB: one that no run has used for a week (its lockfile is gone) goes.
  for (const entry of readdirSync(cache)) {
    const old = join(cache, entry);
    if (Date.now() - statSync(old).mtimeMs > 7 * 24 * 3600 * 1000)
      rmSync(old, { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(cache, 'partial-'));
  for (const { dest, sources } of copies)
    for (const source of sources) {
      const target = dest.endsWith('/') ? join(dir, dest, source) : join(dir, dest);
      cpSync(join(root, source), target, { recursive: true });
    }
  const npm = spawnSync('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production' },
    timeout: 240_000,
  });
  expect(npm.status, `npm ci --omit=dev --offline\n${npm.stdout}\n${npm.stderr}`).toBe(0);
  chmodSync(dir, 0o755);
  // Whole or absent: another run that finished first keeps its (equal) tree.
  try {
    renameSync(dir, kept);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
  return kept;
}

function npmVersion(): string {
  const r = spawnSync('npm', ['--version'], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

/** A file, or every file under a directory, in a stable order. */
function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile())
    .sort();
}

/** A DATA_DIR only the unprivileged user may write. */
function dataDir(): string {
  const dir = mkdtempSync(join(stage, 'data-'));
  if (process.getuid?.() === 0) chownSync(dir, UNPRIVILEGED, UNPRIVILEGED);
  return dir;
}

/**
 * The image's start command: its ENTRYPOINT, as an unprivileged user, from the runtime layout.
 * Node is given the suite's flags for the processes it starts (TEST_PROCESS_NODE_FLAGS, V8
 * without its optimising compiler, harness/processes.ts) as the harness's own starts are: which
 * tier compiles the code changes nothing these tests look at (the role started, its health and
 * readiness, what it may write, its exit), and a start here serves two requests.
 */
function startImage(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ServiceProcess> {
  const [node, ...rest] = entrypoint;
  expect(node).toBe('node');
  const asUser =
    process.getuid?.() === 0
      ? [
          'setpriv',
          [`--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, '--clear-groups', process.execPath],
        ]
      : [process.execPath, []];
  const [command, prefix] = asUser as [string, string[]];
  return startCommand(
    `image ${args.join(' ') || env.ROLE}`,
    command,
    [...prefix, ...testJitFlags(), ...rest, ...args],
    {
      ...imageEnv,
      HOST: '127.0.0.1',
      PORT: '0',
      HOME: '/tmp',
      ...env,
    },
    { cwd: app, timeoutMs },
  );
}

/** What production (the image's NODE_ENV) requires of every role. */
const production = {
  GATEWAY_SHARED_SECRET: 'image-test-secret-0123456789-0123456789',
  AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
  CATALOG_SIZE: '200',
};
const distributed = () => ({
  ...production,
  DATABASE_URL: pg.url,
  REDIS_URL: TEST_REDIS_URL,
  REDIS_KEY_PREFIX: uniquePrefix('image'),
});

describe('the Dockerfile', () => {
  const froms = dockerfile.filter((i) => i.op === 'FROM');
  const run = (s: number) => (stages(dockerfile)[s] ?? []).filter((i) => i.op === 'RUN').map((i) => i.args);

  it('builds in one stage and runs from another that holds production dependencies and dist/ only', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(run(0).join('\n')).toMatch(/npm ci\b/);
    expect(run(0).join('\n')).toMatch(/npm run build/);
    const all = stages(dockerfile);
    expect(all.some((s) => s.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args)))).toBe(true);
    const copies = runtime.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies.join('\n')).toMatch(/--from=build \/app\/dist/);
    for (const c of copies) expect(c).not.toMatch(/\b(lib|gateway|subgraphs|test|src)\b|^\. /);
  });

  it('runs as a non-root user, with a data directory and no moving base tag', () => {
    const user = runtime.filter((i) => i.op === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(imageEnv.DATA_DIR).toMatch(/^\//);
    expect(imageEnv.HOST).toBe('0.0.0.0');
    const arg = dockerfile.find((i) => i.op === 'ARG' && i.args.startsWith('NODE_IMAGE='))?.args ?? '';
    expect(arg).toMatch(/^NODE_IMAGE=node:\d+\.\d+\.\d+-/);
    for (const f of froms) expect(f.args).not.toMatch(/:latest\b/);
  });

  it('limits glibc malloc arenas as every start script does', () => {
    for (const role of ['embedded', 'gateway', 'pricing', 'promotions', 'procurement'] as const) {
      expect(startEnv(role).MALLOC_ARENA_MAX, `npm run start… (${role})`).toBe('2');
    }
    expect(imageEnv.MALLOC_ARENA_MAX).toBe('2');
  });

  it('has every start script hand its shell over to node, so the SIGTERM npm forwards reaches node', () => {
    // sh runs `VAR=x node …` as a child (it execs only a last command without assignments):
    // stopping npm then ended sh and left node running, without its graceful shutdown.
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const starts = Object.entries(pkg.scripts).filter(([name]) => /^start(:|$)/.test(name));
    expect(starts.length).toBe(5);
    for (const [name, script] of starts)
      expect(script, name).toMatch(/&& (?:[A-Z_]+=\S+ )*exec node [^&;|]+$/);
  });

  it('gives node only flags it accepts, and the embedded start the collector settings measured for it', () => {
    for (const role of ['embedded', 'gateway', 'pricing', 'promotions', 'procurement'] as const) {
      const flags = startFlags(role);
      expect(flags.join(' '), role).toMatch(/--max-old-space-size=\d+/);
      // A misspelled V8 flag makes node refuse to start ("bad option"): npm start would fail.
      const r = spawnSync(process.execPath, [...flags, '-e', 'process.exit(0)'], { encoding: 'utf8' });
      expect({ role, status: r.status, stderr: r.stderr }).toEqual({ role, status: 0, stderr: '' });
    }
    // docs/performance.md, "Third pass": fewer full collections under quote load, A/B measured;
    // "Fourth pass": PGlite on baseline code, which Node 22 and later take only from here.
    expect(startFlags('embedded')).toEqual(
      expect.arrayContaining([
        '--no-allocation-site-pretenuring',
        '--heap-growing-percent=200',
        '--liftoff-only',
      ]),
    );
  });

  it('starts the compiled role entry point directly (exec form: node is PID 1 and gets SIGTERM)', () => {
    expect(entrypoint.slice(0, 1)).toEqual(['node']);
    expect(entrypoint.at(-1)).toBe('dist/gateway/role.js');
    expect(readdirSync(join(app, 'dist/gateway'))).toContain('role.js');
    expect(runtime.some((i) => i.op === 'CMD')).toBe(false);
  });

  it('needs no devDependency at run time: every package the compiled code imports is a dependency', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // Follow the imports from the entry point, as Node loads them (a stale file in dist/ that
    // nothing imports does not count).
    const imported = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      // TypeScript's own scanner reads import declarations and import() calls, not words in
      // comments (a comment's "from 'x'" once named a package that was never imported).
      for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles) {
        if (spec.startsWith('.')) visit(join(dirname(file), spec));
        else if (!spec.startsWith('node:'))
          imported.add(
            spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string),
          );
      }
    };
    visit(join(app, entrypoint.at(-1) as string));
    expect(seen.size).toBeGreaterThan(50);
    expect(imported.size).toBeGreaterThan(10);
    const missing = [...imported].filter((p) => !(p in pkg.dependencies));
    expect(missing).toEqual([]);
  });
});

describe('the image start command against the compiled output', () => {
  /**
   * Each role's start, its arguments and environment. Pricing is named by ROLE alone, and
   * promotions by its argument over ROLE=pricing: the service each one logs shows which of the
   * two the start command took (a test of their own started two more processes for that).
   */
  const roles: [string, string[], () => Record<string, string>, string][] = [
    ['embedded', ['embedded'], () => production, 'embedded'],
    ['pricing (ROLE, no argument)', [], () => ({ ...distributed(), ROLE: 'pricing' }), 'pricing'],
    [
      'promotions (the argument over ROLE)',
      ['promotions'],
      () => ({ ...distributed(), ROLE: 'pricing' }),
      'promotions',
    ],
    ['procurement', ['procurement'], distributed, 'procurement'],
    ['gateway', ['gateway'], () => ({ ...distributed(), PRICING_URL: 'http://127.0.0.1:9' }), 'gateway'],
  ];

  it.each(roles)(
    'runs the %s role as an unprivileged user writing only DATA_DIR: /healthz, /readyz, SIGTERM exits 0',
    async (role, args, env, service) => {
      const data = dataDir();
      // The embedded role's first start loads its store from the build's template (in dist/, as
      // in the image): beside the whole suite on two cores a first start once took over 60 s.
      const proc = await startImage(
        args,
        { ...env(), DATA_DIR: data },
        role === 'embedded' ? 150_000 : 60_000,
      );
      try {
        expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
        const ready = await fetch(`${proc.url}/readyz`);
        expect(ready.status, await ready.clone().text()).toBe(200);
        expect(proc.output()).toMatch(new RegExp(`"service":"${service}"|"name":"${service}"`));
        // Started by ROLE, or by an argument over ROLE: the service that started is the one named.
        if (env().ROLE) expect(proc.output()).toMatch(new RegExp(`"service":"${service}"`));
        // A first start: the embedded store's data directory made from the image's template
        // (dist/embedded-store/, lib/db/pglite-template.ts), with no EMBEDDED_DB_TEMPLATE set.
        if (role === 'embedded') {
          expect(existsSync(join(data, 'pglite', 'PG_VERSION'))).toBe(true);
          expect(proc.output()).toContain('"madeFrom":"template"');
        }
      } finally {
        expect(await proc.stop()).toBe(0);
      }
      expect(proc.output()).toContain('shutting down');
    },
    180_000,
  );

  it('refuses an unknown role with exit code 2 and names ROLE', async () => {
    await expect(startImage(['billing'], { DATA_DIR: dataDir() }, 20_000)).rejects.toThrow(
      /exited with 2[\s\S]*ROLE: unknown role "billing"/,
    );
  });
});

/**
 * Starts real service processes (the distributed topology) the way an operator does:
 * `tsx gateway/main.ts` / `tsx subgraphs/<name>/main.ts`, on ephemeral ports, JSON logs on
 * stdout. Resolves once the process logs "listening on <url>".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endWithThisProcess, signalGroup } from './process-group.ts';
import { TEST_STORE_ENV } from './services.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

export interface ServiceProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM, then wait for exit (SIGKILL after 10 s); to its process group when it leads one. */
  stop(): Promise<number | null>;
  /** SIGKILL (to its process group when it leads one): a crash, for fault tests. */
  kill(): Promise<void>;
}

/** The gateway secret of the distributed processes the harness starts, when a test names none. */
export const HARNESS_GATEWAY_SECRET = 'harness-distributed-secret-0123456789abcdef';

export const ENTRY = {
  gateway: 'gateway/main.ts',
  embedded: 'gateway/main.ts',
  pricing: 'subgraphs/pricing/main.ts',
  promotions: 'subgraphs/promotions/main.ts',
  procurement: 'subgraphs/procurement/main.ts',
} as const;

const START_SCRIPT = {
  gateway: 'start:gateway',
  embedded: 'start',
  pricing: 'start:pricing',
  promotions: 'start:promotions',
  procurement: 'start:procurement',
} as const;

function startScript(entry: keyof typeof ENTRY): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return pkg.scripts[START_SCRIPT[entry]] ?? '';
}

/**
 * The node flags its `npm run start…` script gives a process (heap limits and, for the embedded
 * system, the collector's settings; the default heap limit filled in), so benchmarks run what
 * users run.
 */
export function startFlags(entry: keyof typeof ENTRY): string[] {
  const flags = /\bexec node ((?:--\S+ )*)dist\//.exec(startScript(entry))?.[1] ?? '';
  return flags
    .split(' ')
    .filter(Boolean)
    .map((f) => f.replace(/\$\{HEAP_LIMIT_MB:-(\d+)\}/, '$1'));
}

/** The allocator settings its `npm run start…` script gives a process (`MALLOC_ARENA_MAX=2 node …`). */
export function startEnv(entry: keyof typeof ENTRY): Record<string, string> {
  return Object.fromEntries(
    [...startScript(entry).matchAll(/\b(MALLOC_[A-Z_]+)=(\S+) /g)].map((m) => [m[1], m[2]]),
  );
}

export interface StartProcessOptions {
  /** Run the compiled `dist/…js` (as `npm start` does; needs `npm run build`) instead of the source. */
  compiled?: boolean;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** Another Node binary than this process's (benchmarks compare Node releases). */
  node?: string;
  /** The working directory (default: the checkout), e.g. for files V8 writes there. Compiled only. */
  cwd?: string;
  /**
   * Another checkout whose dist/ is started (default: this one), also the working directory
   * unless `cwd` is given: an A/B of two builds (bench/tools/profile-acp.ts, SYSTEM_DIR).
   * Compiled only.
   */
  tree?: string;
  /**
   * Run V8's optimising compiler as production does, even where the suite turns it off
   * (TEST_PROCESS_NODE_FLAGS): for what measures the hot paths (test/runtime/hidden-classes).
   */
  productionJit?: boolean;
}

/**
 * The suite's flags for the processes it starts (vitest.config.ts sets TEST_PROCESS_NODE_FLAGS
 * to `--no-opt`; benchmarks never do). A test process serves a few hundred requests and exits,
 * yet V8's optimising compiler spent ~1 s of CPU on its background threads during each start
 * (a gateway 3.7 → 2.7 s of CPU to listening, the same wall time; four distributed files
 * 90 → 79 s): work for code the process never runs hot. What the processes do is unchanged;
 * only which tier of V8's compilers runs it. README "How long it takes".
 */
export function testJitFlags(): string[] {
  return process.env.TEST_PROCESS_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
}

export async function startProcess(
  entry: keyof typeof ENTRY,
  env: Record<string, string>,
  timeoutMs = 45_000,
  opts: StartProcessOptions = {},
): Promise<ServiceProcess> {
  // `node --import tsx`, not the tsx CLI: the CLI is a wrapper process that does not wait for
  // its child on SIGTERM, so graceful shutdown could not be observed.
  // Under `npm test` the global setup builds dist/ once and asks for it here (TEST_COMPILED):
  // a process from dist/ starts on ~a third less CPU than tsx compiling the sources again.
  const compiled = opts.compiled ?? process.env.TEST_COMPILED === '1';
  const script = compiled
    ? [...startFlags(entry), join(opts.tree ?? root, `dist/${ENTRY[entry].replace(/\.ts$/, '.js')}`)]
    : ['--import', 'tsx', ENTRY[entry]];
  // The distributed topology's processes refuse to start without a shared gateway secret
  // (lib/config.ts, requireSharedSecret): the harness gives them one unless the caller names its
  // own. The embedded process makes its own at each start, as `npm start` does.
  const shared: Record<string, string> =
    entry === 'embedded' ? {} : { GATEWAY_SHARED_SECRET: HARNESS_GATEWAY_SECRET };
  const withStartEnv = compiled
    ? { ...startEnv(entry), ...TEST_STORE_ENV, ...shared, ...env }
    : { ...TEST_STORE_ENV, ...shared, ...env };
  return startCommand(
    entry,
    opts.node ?? process.execPath,
    [...(opts.productionJit ? [] : testJitFlags()), ...(opts.nodeArgs ?? []), ...script],
    withStartEnv,
    {
      timeoutMs,
      ...(compiled && (opts.cwd ?? opts.tree) ? { cwd: opts.cwd ?? opts.tree } : {}),
    },
  );
}

/** Any command that serves like a service process (e.g. the image's entry point, compiled). */
export async function startCommand(
  label: string,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  opts: { timeoutMs?: number; cwd?: string } = {},
): Promise<ServiceProcess> {
  const timeoutMs = opts.timeoutMs ?? 45_000;
  const child = spawn(command, args, {
    cwd: opts.cwd ?? root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      APOLLO_TELEMETRY_DISABLED: '1',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      // Tests and benches send at once what they measure; bench/tools/warm-start.ts sets it.
      WARM_UP_MS: '0',
      // They count every answer; the shedding has its own test and bench (issue 48).
      SHED_QUOTE_BUDGET_MS: '0',
      SHED_ORDER_BUDGET_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: what it starts (npm's node, a wrapper's server) ends with it (process-group.ts).
    detached: true,
  });
  endWithThisProcess(child);
  return untilListening(label, child, timeoutMs, (out) => /"msg":"listening on (http[^"]+)"/.exec(out)?.[1]);
}

/**
 * A spawned server as a ServiceProcess once `listening(output so far)` finds its URL: shared by
 * our own processes (their log line) and the bench's peers (e.g. Hive Gateway's banner). A child
 * spawned `detached` is signalled with its whole process group (process-group.ts): a wrapper
 * (strace) and the server under it end together.
 */
export async function untilListening(
  label: string,
  child: ChildProcess,
  timeoutMs: number,
  listening: (out: string) => string | undefined,
): Promise<ServiceProcess> {
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // A process that did not listen in time is stopped, not left running beside the next start
    // (found: one left by a bench's timed-out start ran on for 27 minutes).
    const timer = setTimeout(() => {
      signalGroup(child, 'SIGKILL');
      reject(new Error(`${label} did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const found = listening(out);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      signalGroup(child, 'SIGTERM');
      const t = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
    async kill() {
      if (child.exitCode === null) signalGroup(child, 'SIGKILL');
      await exited;
    },
  };
}

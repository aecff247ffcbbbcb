/**
 * The platform's side of AP2 for the UCP load (./flows.ts): checkout mandates made as a platform
 * makes them when its user confirms (ap2-mandates.md at v2026-04-08), by ./mandate-maker.mjs.
 *
 * Not in the loop that times the answers: a mandate takes milliseconds of CPU (two ECDSA
 * signatures, the disclosure's digest), and made there it would delay the timing of every answer
 * that arrived meanwhile, making the server look slower with AP2 than it is.
 *
 * In a process of its own under SCHED_IDLE (`chrt --idle 0`), warmed before the first flow. On a
 * machine of two cores the platform's work competes with the server's threads in the AP2 rounds
 * only, and the mandates' thread at nice 19 (session 49's way, still `BENCH_UCP_MANDATES=thread`)
 * did not keep it out of their way: (1) what the thread hands on runs at the generator's
 * priority: V8 compiles on its platform threads, @sd-jwt/crypto-nodejs signed through WebCrypto
 * in libuv's pool (the maker now signs with node:crypto's synchronous ECDSA), and a fresh thread
 * per load loaded and compiled @sd-jwt inside the measured rounds (a process is warmed before
 * them); (2) a nice-19 thread that holds a core is not preempted at once when a server thread
 * wakes (the fair scheduler weighs it, it does not yield to it), where a SCHED_IDLE task is. A
 * process's policy reaches every thread it starts. The platform's work is not hidden: each
 * mandate is still made from the update's answer before its completion is sent, and the time
 * from that answer to the completion's (mandate included) is reported beside the completion's
 * own latency (`confirmToComplete`). Where `chrt` is missing, or with `BENCH_UCP_MANDATES=nice`,
 * the process runs at nice 19 (all its threads: the middle way, for a machine with no idle core,
 * where a SCHED_IDLE maker starves and sends its completions late and in bursts).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** A private JWK (EC P-256) as JSON: what a worker can be given. */
export type PrivateJwk = Record<string, unknown> & { d: string };

export interface Ap2Platform {
  /** The key the platform profile's `signing_keys` publishes as `kid`. */
  issuer: PrivateJwk;
  kid: string;
  /** The holder's key (`cnf.jwk`), which signs the KB-JWT. */
  holder: PrivateJwk;
  /** The KB-JWT's `aud`: the business profile's URL. */
  audience: string;
}

type Checkout = Record<string, unknown> & { id: string };
type Reply = { id: number; mandate?: string; error?: string; ready?: boolean };

export interface MandateMaker {
  /** Resolves once the maker can make mandates (a process: warmed). */
  ready: Promise<void>;
  make(checkout: Checkout): Promise<string>;
  close(): Promise<void>;
}

const MAKER = fileURLToPath(new URL('./mandate-maker.mjs', import.meta.url));
const hasChrt = () => spawnSync('chrt', ['--idle', '0', 'true']).status === 0;

/**
 * How the maker's process starts: under SCHED_IDLE (the default), or at nice 19
 * (`BENCH_UCP_MANDATES=nice`, or where `chrt` is missing); either way every thread it starts
 * inherits it (a niceness set later with setpriority would reach its main thread only).
 */
function makerCommand(): [string, string[]] {
  const node = [process.execPath, '--single-threaded-gc', MAKER];
  return process.env.BENCH_UCP_MANDATES !== 'nice' && hasChrt()
    ? ['chrt', ['--idle', '0', ...node]]
    : ['nice', ['-n', '19', ...node]];
}

/**
 * The maker as a SCHED_IDLE process (the default), a nice-19 process (`BENCH_UCP_MANDATES=nice`)
 * or a nice-19 thread (`BENCH_UCP_MANDATES=thread`, session 49's).
 */
export function mandateMaker(a: Ap2Platform): MandateMaker {
  const waiting = new Map<number, { ok: (m: string) => void; fail: (e: Error) => void }>();
  let n = 0;
  // A maker that died fails every mandate asked of it, now and later (a flow must not wait for ever).
  let dead: Error | undefined;
  const die = (e: Error) => {
    dead = e;
    for (const w of waiting.values()) w.fail(e);
  };
  let ready!: () => void;
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  const onReply = (m: Reply) => {
    if (m.ready) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.mandate !== undefined) w?.ok(m.mandate);
    else w?.fail(new Error(`mandate: ${m.error}`));
  };
  let post: (m: unknown) => void;
  let close: () => Promise<void>;
  if (process.env.BENCH_UCP_MANDATES === 'thread') {
    const worker = new Worker(MAKER, { workerData: { ap2: a } });
    worker.on('message', onReply);
    worker.once('error', die);
    ready();
    post = (m) => worker.postMessage(m);
    close = async () => {
      await worker.terminate();
    };
  } else {
    const [command, args] = makerCommand();
    const child: ChildProcess = spawn(command, args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_UCP_AP2: JSON.stringify(a) },
    });
    child.on('message', onReply);
    child.once('error', die);
    child.once('exit', (code) => {
      die(new Error(`the mandate maker exited (${code})`));
      ready();
    });
    post = (m) => child.send(m as object);
    close = async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.disconnect();
      await exited;
    };
  }
  return {
    ready: readyP,
    make: (checkout) =>
      new Promise((ok, fail) => {
        if (dead) return fail(dead);
        const id = ++n;
        waiting.set(id, { ok, fail });
        post({ id, checkout });
      }),
    close,
  };
}

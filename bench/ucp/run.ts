/**
 * The UCP group of `npm run bench` (`-- --only ucp`, issue 50's performance goal): UCP checkout
 * flows on the embedded system (`npm start`'s compiled process, its store on disk), with AP2
 * negotiated and without, from one platform (one API key, two profiles: one listing
 * `dev.ucp.shopping.ap2_mandate` and its signing key, one not).
 *
 *   1. closed loop, 10 flows at a time, each kind: its maximum (completions/s);
 *   2. open loop at 50 % of the lower maximum, the two kinds in alternated rounds at that same
 *      rate (the VM's speed drifts within minutes: the ratio is taken round by round and its
 *      median reported), each request's latency from its due time.
 *
 * Every UCP answer is signed either way (RFC 9421, Content-Digest); AP2 adds the merchant
 * authorization (JCS + ES256) on every checkout and, at completion, the mandate's verification
 * (SD-JWT + key binding, our signature inside it). Goal: complete p99 with AP2 ≤ 1.3× without.
 *
 * BENCH_UCP_CONTROL=1: the plain kind's platform makes a mandate over each checkout too and does
 * not send it (`platformWork`, ./flows.ts), so both kinds' generators load the shared cores
 * alike: what is left between them is the server's AP2 work (docs/ap2.md, "Not done yet").
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { type ProfileServer, platformProfile, startProfileServer } from '../../harness/ucp-platform.ts';
import { OPS } from '../acp/flows.ts';
import { issueBenchKey } from '../acp/key.ts';
import { cpuSeconds, cpuSecondsWithChildren } from '../tools/proc.ts';
import { runUcpFlows, type UcpFlowOptions, type UcpFlowResult } from './flows.ts';
import type { PrivateJwk } from './mandate.ts';

export const UCP_GOALS = { completeP99Ratio: 1.3 } as const;
const KID = 'bench-platform-ap2';

/**
 * A load's figures, and for the open-loop rounds the server's CPU ms per flow and the
 * generator's (this process: the flows' thread and, with AP2, the thread making the mandates),
 * which shares the machine's cores with the server, and its mandate maker's process with it.
 */
type Measured = UcpFlowResult & { serverCpuMs?: number; generatorCpuMs?: number };

export interface UcpRun {
  /** Closed loop, 10 flows at a time. */
  closed: { plain: Measured; ap2: Measured };
  rate: number;
  /** Open loop at `rate`, alternated: round i is `plain[i]` and `ap2[i]`. */
  plain: Measured[];
  ap2: Measured[];
}

const privateJwk = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as PrivateJwk;

/**
 * The one platform's two kinds of flow: its API key, and its two profiles (one with AP2 and its
 * signing key, one without) served by `profiles`.
 */
export async function platforms(url: string, dataDir: string, profiles: ProfileServer) {
  const issuer = privateJwk();
  const { d: _d, ...issuerPublic } = issuer;
  const ap2Profile = profiles.set(
    '/ap2.json',
    platformProfile({
      capabilities: ['checkout', 'order', 'fulfillment', 'ap2_mandate'],
      signingKeys: [{ ...issuerPublic, kid: KID, use: 'sig', alg: 'ES256' }],
    }),
  );
  const plainProfile = profiles.set(
    '/plain.json',
    platformProfile({ capabilities: ['checkout', 'order', 'fulfillment'] }),
  );
  const key = await issueBenchKey(url, dataDir, 'bench-ucp', { ucpProfile: profiles.origin });
  // The KB-JWT's audience: the business profile at the REST endpoint's origin (ap2-mandates.md).
  const business = (await (await fetch(`${url}/.well-known/ucp`)).json()) as {
    ucp: { services: Record<string, { transport: string; endpoint: string }[]> };
  };
  const rest = business.ucp.services['dev.ucp.shopping']?.find((s) => s.transport === 'rest');
  const audience = `${new URL(rest?.endpoint ?? url).origin}/.well-known/ucp`;
  const platform = { issuer, kid: KID, holder: privateJwk(), audience };
  return {
    plain: {
      url,
      key,
      profileUrl: plainProfile,
      ...(process.env.BENCH_UCP_CONTROL ? { platformWork: platform } : {}),
    },
    ap2: { url, key, profileUrl: ap2Profile, ap2: platform },
  } satisfies Record<string, Omit<UcpFlowOptions, 'seconds'>>;
}

export async function runUcp(quick: boolean, log: (s: string) => void): Promise<UcpRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-bench-ucp-'));
  const system = await startEmbeddedSystem(process.env.BENCH_NODE, [], {
    DATA_DIR: dataDir,
    // The platform's profiles are served over http on loopback by this process.
    UCP_PROFILE_ALLOW_INSECURE: 'true',
  });
  const profiles = await startProfileServer();
  try {
    const kinds = await platforms(system.url, dataDir, profiles);
    const pid = system.child.pid ?? 0;
    const seconds = quick ? 3 : 10;
    const warmupSeconds = quick ? 1 : 3;

    // Both kinds warmed before either is measured: the first load after the start meets the JIT.
    for (const kind of ['plain', 'ap2'] as const)
      await runUcpFlows({ ...kinds[kind], seconds: warmupSeconds, concurrency: 10 });
    const closed = {
      plain: await runUcpFlows({ ...kinds.plain, seconds, warmupSeconds, concurrency: 10 }),
      ap2: await runUcpFlows({ ...kinds.ap2, seconds, warmupSeconds, concurrency: 10 }),
    };
    for (const kind of ['plain', 'ap2'] as const)
      log(
        `ucp / closed loop ${kind}: ${closed[kind].flowsPerSecond.toFixed(0)} completions/s${failuresOf(closed[kind])}\n`,
      );
    // BENCH_UCP_RATE: this rate instead (two builds compared at the same load on a busy machine).
    const rate =
      Number(process.env.BENCH_UCP_RATE) ||
      Math.max(1, Math.round(Math.min(closed.plain.flowsPerSecond, closed.ap2.flowsPerSecond) * 0.5));
    const plain: Measured[] = [];
    const ap2: Measured[] = [];
    for (let round = 1; round <= (quick ? 1 : 3); round++) {
      // The order within a round alternates too, so neither kind always follows the other.
      const order = round % 2 === 1 ? (['plain', 'ap2'] as const) : (['ap2', 'plain'] as const);
      for (const kind of order) {
        const cpu = cpuSeconds(pid);
        // The generator's own, and its mandate maker's (a child process, reaped when the round ends).
        const generator = () => {
          const c = cpuSecondsWithChildren(process.pid);
          return c.self + c.children;
        };
        const own = generator();
        const r: Measured = await runUcpFlows({ ...kinds[kind], seconds, warmupSeconds: 2, rate });
        // The server's CPU per flow started (warm-up included): less at the mercy of a busy
        // machine than the latencies.
        const flowsStarted = rate * (seconds + 2);
        r.serverCpuMs = ((cpuSeconds(pid) - cpu) * 1000) / flowsStarted;
        r.generatorCpuMs = ((generator() - own) * 1000) / flowsStarted;
        (kind === 'plain' ? plain : ap2).push(r);
        log(
          `ucp / open loop ${rate} flows/s ${kind} (round ${round}): ${OPS.map((op) => `${op} p99 ${r.ops[op].p99.toFixed(2)} ms`).join(', ')}, server CPU ${r.serverCpuMs?.toFixed(2)} ms/flow, generator CPU ${r.generatorCpuMs?.toFixed(2)} ms/flow${failuresOf(r)}\n`,
        );
      }
    }
    log(
      `ucp / platform profiles fetched: ${profiles.hits('/plain.json')} plain, ${profiles.hits('/ap2.json')} AP2\n`,
    );
    return { closed, rate, plain, ap2 };
  } finally {
    await profiles.close();
    await system.stop();
  }
}

const failuresOf = (r: UcpFlowResult) =>
  Object.keys(r.failures).length ? `; failed ${JSON.stringify(r.failures)}` : '';

const fmt = (n: number, d = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

/** Each round's ratio of the AP2 flows' p99 to the plain ones' for `op`. */
export const p99Ratios = (r: UcpRun, op: (typeof OPS)[number]) =>
  r.ap2.map((a, i) => a.ops[op].p99 / (r.plain[i]?.ops[op].p99 ?? Number.NaN));

export function ucpTable(r: UcpRun): string {
  const lines = [
    '| load | AP2 | operation | completions/s | p50 ms | p99 ms | p99.9 ms | failed | server CPU ms/flow |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const rows = (load: string, kind: string, res: Measured) => {
    for (const op of OPS) {
      const f = res.ops[op];
      lines.push(
        `| ${load} | ${kind} | ${op} | ${fmt(res.flowsPerSecond, 0)} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(f.p999)} | ${f.failed} | ${res.serverCpuMs === undefined ? '—' : fmt(res.serverCpuMs)} |`,
      );
    }
  };
  rows('closed loop, 10 flows at a time', 'no', r.closed.plain);
  rows('closed loop, 10 flows at a time', 'yes', r.closed.ap2);
  for (const [i, plain] of r.plain.entries()) {
    const load = `open loop, ${r.rate} flows/s (50 %), round ${i + 1}`;
    rows(load, 'no', plain);
    const ap2 = r.ap2[i];
    if (ap2) rows(load, 'yes', ap2);
  }
  const ratio = (op: (typeof OPS)[number]) => {
    const rs = p99Ratios(r, op);
    return `**${median(rs).toFixed(2)}×** (rounds ${rs.map((x) => x.toFixed(2)).join(', ')})`;
  };
  const cpu = r.ap2.map((a, i) => (a.serverCpuMs ?? 0) / (r.plain[i]?.serverCpuMs ?? Number.NaN));
  const complete = median(p99Ratios(r, 'complete'));
  const failed = r.ap2.concat(r.plain).some((x) => OPS.some((op) => x.ops[op].failed > 0));
  const met = complete <= UCP_GOALS.completeP99Ratio && !failed;
  const making = r.ap2.flatMap((a) => (a.mandate ? [a.mandate] : []));
  const confirmed = r.ap2.flatMap((a) => (a.confirmToComplete ? [a.confirmToComplete] : []));
  const maker = making.length
    ? ` The generator made each mandate in ${fmt(Math.min(...making.map((m) => m.p50)))}–${fmt(Math.max(...making.map((m) => m.p50)))} ms (p50 of the rounds; p99 up to ${fmt(Math.max(...making.map((m) => m.p99)))} ms), before the completion was due (bench/ucp/mandate.ts: ${{ thread: 'a thread at nice 19', nice: 'a process at nice 19' }[process.env.BENCH_UCP_MANDATES ?? ''] ?? 'a process under SCHED_IDLE'}); from the update's answer to the completion's, the mandate included, p99 ${confirmed.map((c) => fmt(c.p99)).join(', ')} ms (the rounds).`
    : '';
  const delays = (xs: UcpFlowResult[]) => fmt(Math.max(...xs.map((x) => x.generatorDelayP99)));
  const generatorCpu = (xs: Measured[]) => fmt(median(xs.map((x) => x.generatorCpuMs ?? 0)));
  const generator = ` The generator's own event-loop delay (p99, the open-loop rounds' highest; it adds to the latencies it times): ${delays(r.plain)} ms without AP2, ${delays(r.ap2)} ms with; its CPU per flow (the median round; it shares the machine's cores with the server): ${generatorCpu(r.plain)} ms without AP2, ${generatorCpu(r.ap2)} ms with.`;
  return `${lines.join('\n')}\n\np99 with AP2 ÷ without, open loop at ${r.rate} flows/s, median of the rounds: complete ${ratio('complete')}, goal ≤ ${UCP_GOALS.completeP99Ratio}×: ${met ? 'met' : 'not met'}${failed ? ' (some flows failed)' : ''}; create ${ratio('create')}; update ${ratio('update')}. The server's CPU per flow with AP2 ÷ without: **${median(cpu).toFixed(2)}×** (rounds ${cpu.map((x) => x.toFixed(2)).join(', ')}).${maker}${generator}`;
}

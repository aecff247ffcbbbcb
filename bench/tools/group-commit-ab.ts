/**
 * The embedded store's group commit against a sync per commit (EMBEDDED_DB_FSYNC=on and
 * `commit`), on bench/ucp's checkout flows, where each step commits on its own: for each mode,
 * alternated, two starts: the AP2 flows' closed-loop maximum (10 at a time), then plain, AP2,
 * AP2, plain at RATE flows/s open loop (p99 of create, update, complete; the completion's p50).
 * SLOW_SYNC_US=<µs>: every sync of the system's process takes that much longer (./slow-sync.c,
 * LD_PRELOAD), as on a disk slower than this VM's.
 *   npm run build && [SLOW_SYNC_US=2000] tsx bench/tools/group-commit-ab.ts [rate=100]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { startProfileServer } from '../../harness/ucp-platform.ts';
import { runUcpFlows } from '../ucp/flows.ts';
import { platforms } from '../ucp/run.ts';

const rate = Number(process.argv[2] ?? 100);
const slow = process.env.SLOW_SYNC_US;
let preload: Record<string, string> = {};
if (slow) {
  const source = fileURLToPath(new URL('./slow-sync.c', import.meta.url));
  const lib = join(mkdtempSync(join(tmpdir(), 'ac-slow-sync-')), 'slow-sync.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', lib, source, '-ldl']);
  preload = { LD_PRELOAD: lib, SLOW_SYNC_US: slow };
}
for (let pass = 0; pass < 2; pass++)
  for (const mode of ['commit', 'on']) {
    const dataDir = mkdtempSync(join(tmpdir(), 'ac-group-commit-ab-'));
    const sys = await startEmbeddedSystem(undefined, [], {
      DATA_DIR: dataDir,
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      EMBEDDED_DB_FSYNC: mode,
      ...preload,
    });
    const profiles = await startProfileServer();
    try {
      const kinds = await platforms(sys.url, dataDir, profiles);
      for (const k of ['plain', 'ap2'] as const)
        await runUcpFlows({ ...kinds[k], seconds: 3, concurrency: 10 });
      const closed = await runUcpFlows({ ...kinds.ap2, seconds: 5, warmupSeconds: 1, concurrency: 10 });
      const out = [`${mode}: closed loop AP2 ${closed.flowsPerSecond.toFixed(0)}/s`];
      for (const k of ['plain', 'ap2', 'ap2', 'plain'] as const) {
        const r = await runUcpFlows({ ...kinds[k], seconds: 10, warmupSeconds: 2, rate });
        const p99 = (op: 'create' | 'update' | 'complete') => r.ops[op].p99.toFixed(1);
        out.push(
          `${k} p99 create ${p99('create')} update ${p99('update')} complete ${p99('complete')} (complete p50 ${r.ops.complete.p50.toFixed(1)})`,
        );
      }
      console.log(out.join(' | '));
    } finally {
      await profiles.close();
      await sys.stop();
    }
  }

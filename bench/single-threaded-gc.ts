/**
 * A process that generates load collects garbage on one thread: imported first by the load
 * generators (open-loop/generator.ts, loadgen.ts, acp/flows.ts), it starts the process again
 * with `--single-threaded-gc` when it was started without it, and exits with its status.
 *
 * Why: V8 collects with helper threads (parallel scavenges and marking, concurrent sweeping),
 * one set per process. The bench's process and its generator worker shared that set, and their
 * collections (the idle main isolate's memory reducer among them) put three more threads in the
 * run queue of a 2-core machine whose cores the server's main and store threads need. Sampled
 * with `SCHED=1 BESIDE=100 WINDOWS_OF=background tsx bench/tools/stall-trace.ts rest 1200 15`
 * (tools/sched.ts): in the windows of slow orders the server's main thread waited for a core
 * 46–60 ms of 150 while the bench's helper threads ran 15–35 ms each. With one collector
 * thread a generator's own pause still counts (a late request's latency runs from its due
 * time) but takes no core from the server. Alternated runs (docs/performance.md, "The load
 * generator's collector"): REST quote p99 5.6–16.3 ms with it against 16.3–50 ms without, and
 * the orders beside it 12.9–41.6 ms against 36–119 ms. Node takes V8 flags per process only
 * (a worker's `execArgv` refuses them), hence the restart.
 *
 * BENCH_GC=parallel keeps V8's default (to measure what this changes). Not in tests (VITEST) or
 * in a worker thread (the generator's own, which the process's flag already covers).
 */
import { spawnSync } from 'node:child_process';
import { isMainThread } from 'node:worker_threads';

if (
  isMainThread &&
  !process.env.VITEST &&
  process.env.BENCH_GC !== 'parallel' &&
  !process.execArgv.includes('--single-threaded-gc')
) {
  const run = spawnSync(
    process.execPath,
    ['--single-threaded-gc', ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  process.exit(run.status ?? 1);
}

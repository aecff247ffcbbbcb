/**
 * Loaded into the system under test with `--require` (bench only, no product code): V8's
 * sampling heap profiler, counting the objects the young and old collections freed too (what the
 * default heap profile leaves out, and what a scavenge-bound tail is made of), written as
 * .heapprofile files (Chrome DevTools' format): on each SIGUSR2 the samples since the last one
 * go to `<HEAP_SAMPLING_OUT>.<n>` (n = 1, 2, …) and sampling starts afresh, and at exit the rest
 * goes to HEAP_SAMPLING_OUT. So a tool can cut the run into segments (bench/tools/ucp-ab.ts: one
 * a round) and read them with ./heap-sampling.ts, which ./alloc-profile.ts shares.
 * HEAP_SAMPLING_INTERVAL: bytes between samples (default 16384).
 */
'use strict';
const out = process.env.HEAP_SAMPLING_OUT;
if (out) {
  const inspector = require('node:inspector');
  const { writeFileSync } = require('node:fs');
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.enable');
  const start = () =>
    session.post('HeapProfiler.startSampling', {
      samplingInterval: Number(process.env.HEAP_SAMPLING_INTERVAL ?? 16_384),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  // A session of the same thread answers synchronously, so each profile is written at once.
  const stop = (file) =>
    session.post('HeapProfiler.stopSampling', (err, r) => {
      if (!err) writeFileSync(file, JSON.stringify(r.profile));
    });
  start();
  let segment = 0;
  process.on('SIGUSR2', () => {
    stop(`${out}.${++segment}`);
    start();
  });
  process.on('exit', () => stop(out));
}

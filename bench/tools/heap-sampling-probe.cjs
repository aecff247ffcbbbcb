/**
 * Loaded into the system under test with `--require` (bench only, no product code): V8's
 * sampling heap profiler over the process's whole life, counting the objects the young and old
 * collections freed too (what the default heap profile leaves out, and what a scavenge-bound
 * tail is made of), written as a .heapprofile (Chrome DevTools' format) to HEAP_SAMPLING_OUT at
 * exit. Allocations by function, inclusive, show what a request kind allocates beyond another.
 * Used by bench/tools/ucp-ab.ts with UCP_AB_HEAP=<file> (docs/ap2.md, "Not done yet").
 */
'use strict';
const out = process.env.HEAP_SAMPLING_OUT;
if (out) {
  const inspector = require('node:inspector');
  const { writeFileSync } = require('node:fs');
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // A session of the same thread answers synchronously, so the profile is written before exit.
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (err, r) => {
      if (!err) writeFileSync(out, JSON.stringify(r.profile));
    });
  });
}

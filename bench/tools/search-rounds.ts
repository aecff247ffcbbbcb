/**
 * The catalog bench's search load (bench/catalog/search.ts `searchLoad`: the closed-loop maximum,
 * then 10 s at half of it, open loop) run ROUNDS times in a row on one started system, so the
 * first load after a start can be told from the later ones (docs/benchmarks.md, "Catalog").
 *   npm run build && tsx bench/tools/search-rounds.ts [rounds=3]   (DATABASE_URL: on PostgreSQL)
 */
import { readRelevanceSet } from '../catalog/relevance.ts';
import { ourRequests, searchLoad, startOurs } from '../catalog/search.ts';

const rounds = Number(process.argv[2] ?? 3);
const ours = await startOurs(process.env.DATABASE_URL);
const requests = ourRequests(readRelevanceSet().queries);
try {
  for (let i = 1; i <= rounds; i++) {
    const r = await searchLoad(ours.sys.url, requests, false);
    console.log(
      `round ${i}: closed-loop max ${Math.round(r.max)}/s; at ${Math.round(r.max / 2)}/s p50 ${r.half.p50.toFixed(2)} ms, p99 ${r.half.p99.toFixed(2)} ms, max ${r.half.max.toFixed(2)} ms`,
    );
  }
} finally {
  await ours.sys.stop();
}

/**
 * A first start's store steps, timed alone in process (docs/performance.md, "A new store from the
 * build's template"): opening a new data directory (initdb, or the template given), the catalog's
 * migrations, the seed of the default catalog.
 *   npx tsx bench/tools/start-phases.ts [template.tar]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite } from '../../lib/db/pglite.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
let t = performance.now(),
  c = cpu();
const lap = (what: string) => {
  const n = performance.now(),
    cc = cpu();
  console.log(`${what}: ${((n - t) / 1000).toFixed(2)} s wall, ${(cc - c).toFixed(2)} s CPU`);
  t = n;
  c = cc;
};
const db = await openPglite(mkdtempSync(join(tmpdir(), 'phases-')), { template: process.argv[2] });
lap(process.argv[2] ? 'open (from the template)' : 'open (initdb)');
await migrateCatalog(db);
lap('catalog migrations');
await seedCatalog(db, 10000);
lap('seed 10000');
await db.close();

/**
 * The two stores the catalog runs on, for tests that run the same cases on each
 * (`describe.each(catalogStores('search'))`): the embedded PGlite (from the migrated template)
 * and a fresh schema of the test PostgreSQL, `label` naming it (`t_<label>_…`), opened with a
 * pool of `connections`.
 */
import { freshPostgres, TEST_PGLITE } from '../../../harness/services.ts';
import type { Db } from '../../../lib/db/index.ts';
import { openPglite } from '../../../lib/db/pglite.ts';
import { openPostgres } from '../../../lib/db/postgres.ts';

export type OpenCatalogStore = () => Promise<{ db: Db; drop(): Promise<void> }>;

export function catalogStores(label: string, connections = 2): [string, OpenCatalogStore][] {
  return [
    [
      'embedded store (PGlite)',
      async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} }),
    ],
    [
      'PostgreSQL',
      async () => {
        const pg = await freshPostgres(label);
        return { db: await openPostgres(pg.url, connections), drop: pg.drop };
      },
    ],
  ];
}

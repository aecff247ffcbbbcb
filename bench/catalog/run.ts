/**
 * The catalog group of `npm run bench` (`-- --only catalog`, issue 47): search latency at half
 * its closed-loop maximum on the embedded store (the default catalog, 10,000 SKUs) and on
 * PostgreSQL at several catalog sizes (`--catalog-size`, the largest: seeding takes a while),
 * MiniSearch beside it on the same products (peer.ts), nDCG@10 of both on the labelled queries
 * (labels.ts, relevance.json), and the import rate of `npm run catalog:import` into both stores
 * with the importer's peak RSS at two sizes.
 */
import { execFileSync } from 'node:child_process';
import { QUOTE_CATALOG_SIZE } from '../../harness/requests.ts';
import { type ImportRun, runImport, writeFeed } from './import.ts';
import { seededPostgres } from './postgres.ts';
import { type Relevance, readRelevanceSet, relevance } from './relevance.ts';
import { ourRequests, peerLoad, type SearchLoad, searchLoad, startOurs } from './search.ts';

export interface SizedSearch {
  skus: number;
  products: number;
  seedSeconds?: number;
  ours: SearchLoad;
  /** MiniSearch on the same products; absent above PEER_MAX_SKUS. */
  peer?: SearchLoad;
}

export interface CatalogRun {
  embedded: SizedSearch;
  postgres: SizedSearch[];
  relevance: Relevance;
  imports: { store: 'embedded' | 'PostgreSQL'; run: ImportRun }[];
  /** `uptime`'s load averages, as read at each step. */
  loads: string[];
}

export interface CatalogOptions {
  /** The largest catalog on PostgreSQL, in SKUs. */
  catalogSize: number;
}

export const DEFAULT_CATALOG_SIZE = 100_000;

/**
 * The largest catalog MiniSearch is loaded at. It holds its whole index in the heap and fell to
 * 35 searches/s at 100,000 SKUs (p99 433 ms at half of it, 16:00 run): at the 1,000,000-product
 * size (~2.2 million SKUs) it would take minutes to index and gigabytes of heap to say what the
 * smaller sizes already say. Above it the row says "not run".
 */
export const PEER_MAX_SKUS = 100_000;

const loadAverage = () =>
  /load average: (.*)$/.exec(execFileSync('uptime', { encoding: 'utf8' }).trim())?.[1] ?? '?';

/** The PostgreSQL sizes: 10,000 SKUs (the embedded default), the largest, and one between. */
export function postgresSizes(largest: number, quick: boolean): number[] {
  if (quick) return [Math.min(largest, 5_000)];
  const between = Math.round(Math.sqrt(QUOTE_CATALOG_SIZE * largest) / 1000) * 1000;
  return [...new Set([QUOTE_CATALOG_SIZE, between, largest])]
    .filter((n) => n <= largest)
    .sort((a, b) => a - b);
}

async function importsInto(
  store: CatalogRun['imports'][number]['store'],
  databaseUrl: string | undefined,
  sizes: number[],
  log: (s: string) => void,
): Promise<CatalogRun['imports']> {
  const ours = await startOurs(databaseUrl);
  const out: CatalogRun['imports'] = [];
  try {
    for (const size of sizes) {
      const feed = await writeFeed(size);
      const run = await runImport(feed, ours.sys.url, ours.dataDir);
      log(
        `catalog / import into ${store}, ${run.products} products: ${Math.round(run.rate)}/s, peak RSS ${run.peakRssMb.toFixed(0)} MB\n`,
      );
      out.push({ store, run });
    }
  } finally {
    await ours.sys.stop();
  }
  return out;
}

export async function runCatalog(
  quick: boolean,
  log: (s: string) => void,
  o: CatalogOptions,
): Promise<CatalogRun> {
  const set = readRelevanceSet();
  const requests = ourRequests(set.queries);
  const loads = [loadAverage()];
  const peers = new Map<number, SearchLoad>();
  const peerAt = async (skus: number) => {
    const known = peers.get(skus) ?? (await peerLoad(skus, set.queries, quick));
    peers.set(skus, known);
    log(
      `catalog / MiniSearch, ${skus} SKUs: max ${Math.round(known.max)}/s, p99 at 50 % ${known.half.p99.toFixed(2)} ms\n`,
    );
    return known;
  };

  const ours = await startOurs();
  let embedded: SizedSearch;
  let rel: Relevance;
  try {
    rel = await relevance(ours.sys.url, set);
    log(`catalog / nDCG@10: ours ${rel.ours.toFixed(3)}, MiniSearch ${rel.peer.toFixed(3)}\n`);
    const load = await searchLoad(ours.sys.url, requests, quick);
    log(`catalog / embedded: max ${Math.round(load.max)}/s, p99 at 50 % ${load.half.p99.toFixed(2)} ms\n`);
    embedded = { skus: set.catalogSize, products: 0, ours: load, peer: await peerAt(set.catalogSize) };
  } finally {
    await ours.sys.stop();
  }
  loads.push(loadAverage());

  const postgres: SizedSearch[] = [];
  for (const skus of postgresSizes(o.catalogSize, quick)) {
    const pg = await seededPostgres(skus);
    log(
      `catalog / PostgreSQL, ${skus} SKUs (${pg.products} products) seeded in ${pg.seedSeconds.toFixed(0)} s\n`,
    );
    try {
      const sys = await startOurs(pg.url);
      try {
        const load = await searchLoad(sys.sys.url, requests, quick);
        log(
          `catalog / PostgreSQL ${skus}: max ${Math.round(load.max)}/s, p99 at 50 % ${load.half.p99.toFixed(2)} ms\n`,
        );
        postgres.push({
          skus,
          products: pg.products,
          seedSeconds: pg.seedSeconds,
          ours: load,
          ...(skus <= PEER_MAX_SKUS ? { peer: await peerAt(skus) } : {}),
        });
      } finally {
        await sys.sys.stop();
      }
    } finally {
      await pg.drop();
    }
    loads.push(loadAverage());
  }

  const importSizes = quick ? [1_000, 4_000] : [4_000, 16_000];
  const imports = await importsInto('embedded', undefined, importSizes, log);
  const pg = await seededPostgres(QUOTE_CATALOG_SIZE);
  try {
    imports.push(...(await importsInto('PostgreSQL', pg.url, importSizes, log)));
  } finally {
    await pg.drop();
  }
  loads.push(loadAverage());
  return { embedded, postgres, relevance: rel, imports, loads };
}

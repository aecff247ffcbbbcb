/**
 * The import rate of the catalog bench (issue 47): `npm run catalog:import` (the compiled CLI,
 * dist/scripts/catalog-import.js, which streams the file through GraphQL a chunk at a time)
 * against a running system, from an ACP feed written here from the seed generator, products
 * per second from the command's start to its exit, and the command's peak RSS (`/usr/bin/time`).
 * Two sizes: the RSS should not grow with the file.
 *
 * The feed's ids are the generated ones prefixed with `imp-`, so that every product is new to a
 * system already holding the seeded catalog (a re-import of unchanged products writes nothing),
 * and the import is PARTIAL (it creates them; FULL would also remove the seeded ones).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedMetadata } from '../../subgraphs/pricing/catalog/feed/export.ts';
import { feedOfProduct } from '../../subgraphs/pricing/catalog/feed/map.ts';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import {
  availabilityOf,
  type CatalogProductInput,
  purchasable,
} from '../../subgraphs/pricing/catalog/model.ts';

export interface FeedFile {
  dir: string;
  products: number;
  variants: number;
}

const renamed = (p: CatalogProductInput, prefix: string) => ({
  ...p,
  productId: `${prefix}${p.productId}`,
  variants: p.variants.map((v) => {
    const availability = availabilityOf(v.availability, v.inventoryLevel);
    return { ...v, variantId: `${prefix}${v.variantId}`, availability, available: purchasable(availability) };
  }),
});

/**
 * metadata.json and products.jsonl of the generated catalog of `skus` SKUs, priced in USD; ids
 * prefixed with `prefix` (another prefix, another set of products new to the catalog).
 */
export async function writeFeed(skus: number, prefix = 'imp-'): Promise<FeedFile> {
  const dir = mkdtempSync(join(tmpdir(), 'ac-feed-'));
  writeFileSync(
    join(dir, 'metadata.json'),
    JSON.stringify(feedMetadata({ feedId: `bench-${skus}`, targetCountry: 'US', updatedAt: new Date() })),
  );
  const out = createWriteStream(join(dir, 'products.jsonl'));
  let products = 0;
  let variants = 0;
  for (const p of generateProducts(skus)) {
    const line = feedOfProduct(renamed(p, prefix), 'USD');
    if (!line) continue;
    products++;
    variants += (line.variants as unknown[]).length;
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { dir, products, variants };
}

export interface ImportRun {
  products: number;
  variants: number;
  seconds: number;
  /** Products per second, start of the command to its exit. */
  rate: number;
  /** The importer process's peak resident set, MB. */
  peakRssMb: number;
  /** The command's last line (DONE: … created …). */
  summary: string;
}

/**
 * Runs the compiled `catalog:import` CLI on `feed` against `url`; DATA_DIR gives its dev token.
 * `args`: more of the command's options (`--via graphql`).
 */
export async function runImport(
  feed: FeedFile,
  url: string,
  dataDir: string,
  args: readonly string[] = [],
): Promise<ImportRun> {
  const started = performance.now();
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      'peak-rss-kb %M',
      process.execPath,
      'dist/scripts/catalog-import.js',
      feed.dir,
      '--mode',
      'partial',
      '--url',
      url,
      ...args,
    ],
    { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  const summary = stdout.trim().split('\n').at(-1) ?? '';
  if (code !== 0) throw new Error(`catalog:import exited ${code}: ${stdout}\n${stderr.slice(-2000)}`);
  const kb = Number(/peak-rss-kb (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return {
    products: feed.products,
    variants: feed.variants,
    seconds,
    rate: feed.products / seconds,
    peakRssMb: kb / 1024,
    summary,
  };
}

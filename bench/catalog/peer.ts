/**
 * The peer of the catalog bench (issue 47): MiniSearch, the in-memory BM25 engine a Node
 * developer reaches for, indexing the same generated products (title, brand, description,
 * categories, option values) and configured as its README suggests: prefix and fuzzy (0.2)
 * matching, the title boosted. Filters are its `filter` callback over stored fields; a search
 * with filters and no words is its wildcard search.
 *
 * As a process (`node --import tsx bench/catalog/peer.ts <size>`), it serves `POST /search`
 * ({ query?, filters? } → { ids }: the first ten product ids) on node:http, so that it is loaded
 * over HTTP by the same generators as our search.
 */
import { createServer } from 'node:http';
import MiniSearch, { type SearchResult } from 'minisearch';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import { type CatalogProductInput, categoryPaths } from '../../subgraphs/pricing/catalog/model.ts';

export interface PeerFilters {
  categories?: string[];
  brands?: string[];
  options?: { name: string; values: string[] }[];
}

interface Doc {
  id: string;
  title: string;
  brand: string;
  description: string;
  categories: string;
  options: string;
  /** Stored for the filters. */
  paths: string[];
  optionKeys: string[];
}

const docOf = (p: CatalogProductInput): Doc => ({
  id: p.productId,
  title: p.title,
  brand: p.brand ?? '',
  description: p.description.plain,
  categories: p.categories.join(' '),
  options: [...new Set(p.variants.flatMap((v) => v.options.map((o) => o.value)))].join(' '),
  paths: categoryPaths(p.categories),
  optionKeys: p.variants.flatMap((v) => v.options.map((o) => `${o.name}=${o.value}`.toLowerCase())),
});

export interface Peer {
  search(query: string | undefined, filters: PeerFilters | undefined, limit?: number): string[];
}

export function minisearchPeer(products: readonly CatalogProductInput[]): Peer {
  const index = new MiniSearch<Doc>({
    fields: ['title', 'brand', 'description', 'categories', 'options'],
    storeFields: ['brand', 'paths', 'optionKeys'],
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { title: 2 } },
  });
  index.addAll(products.map(docOf));
  return {
    search(query, filters, limit = 10) {
      const paths = filters?.categories?.map((c) => c.toLowerCase());
      const brands = filters?.brands?.map((b) => b.toLowerCase());
      const options = filters?.options?.map((o) => o.values.map((v) => `${o.name}=${v}`.toLowerCase()));
      const filter = (hit: SearchResult) => {
        const r = hit as unknown as Pick<Doc, 'paths' | 'brand' | 'optionKeys'>;
        return (
          (!paths || paths.some((p) => r.paths?.includes(p))) &&
          (!brands || brands.includes((r.brand ?? '').toLowerCase())) &&
          (!options || options.every((any) => any.some((k) => r.optionKeys?.includes(k))))
        );
      };
      const hits = index.search(query?.trim() ? query : MiniSearch.wildcard, { filter });
      return hits.slice(0, limit).map((h) => String(h.id));
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const products = generateProducts(Number(process.argv[2] ?? 10_000));
  const peer = minisearchPeer(products);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        query?: string;
        filters?: PeerFilters;
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ids: peer.search(body.query, body.filters) }));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    console.log(JSON.stringify({ msg: `listening on http://127.0.0.1:${address.port}` }));
  });
}

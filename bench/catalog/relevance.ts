/**
 * Relevance of the catalog search against its peer (issue 47): nDCG@10 over the labelled
 * queries of bench/catalog/relevance.json (labels.ts), for our search through GraphQL
 * `searchProducts` on a running system, and for MiniSearch (peer.ts) on the same products.
 *   tsx bench/catalog/relevance.ts <system url>   (a system with the catalog of the set's size)
 */
import { readFileSync } from 'node:fs';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { type LabelledQuery, RELEVANCE_FILE } from './labels.ts';
import { minisearchPeer } from './peer.ts';

export interface RelevanceSet {
  catalogSize: number;
  queries: LabelledQuery[];
}

export const readRelevanceSet = (): RelevanceSet =>
  JSON.parse(readFileSync(RELEVANCE_FILE, 'utf8')) as RelevanceSet;

/** nDCG@k with gains 2^grade − 1 (graded relevance, Järvelin and Kekäläinen). */
export function ndcg(ranked: readonly string[], relevant: Record<string, number>, k = 10): number {
  const gain = (g: number) => 2 ** g - 1;
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((s, g, i) => s + gain(g) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => relevant[id] ?? 0)) / ideal;
}

export const SEARCH_QUERY =
  'query($input: ProductSearchInput!) { searchProducts(input: $input, first: 10) { totalCount nodes { id title brand } } }';

/** Our search as a storefront calls it: GraphQL `searchProducts`, the first page of ten. */
export function graphqlRequest(q: LabelledQuery): HttpRequestSpec {
  const input = { ...(q.query ? { query: q.query } : {}), ...q.filters };
  return {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: SEARCH_QUERY, variables: { input } }),
  };
}

/** The same query to the peer's server. */
export const peerRequest = (q: LabelledQuery): HttpRequestSpec => ({
  method: 'POST',
  path: '/search',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query: q.query, filters: q.filters }),
});

async function oursRanked(url: string, q: LabelledQuery): Promise<string[]> {
  const r = graphqlRequest(q);
  const res = await fetch(`${url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });
  const body = (await res.json()) as {
    data?: { searchProducts: { nodes: { id: string }[] } };
    errors?: unknown;
  };
  if (!body.data) throw new Error(`search ${q.id}: ${JSON.stringify(body.errors)}`);
  return body.data.searchProducts.nodes.map((n) => n.id);
}

export interface Relevance {
  ours: number;
  peer: number;
  /** Mean nDCG@10 by kind of query, ours and the peer's. */
  byKind: Record<string, { ours: number; peer: number; n: number }>;
  /** The queries where ours is lowest against the peer's, for the reading. */
  worst: { id: string; query: string; ours: number; peer: number }[];
}

export async function relevance(url: string, set = readRelevanceSet()): Promise<Relevance> {
  const peer = minisearchPeer(generateProducts(set.catalogSize));
  const rows: { q: LabelledQuery; ours: number; peer: number }[] = [];
  for (const q of set.queries) {
    const ours = ndcg(await oursRanked(url, q), q.relevant);
    rows.push({ q, ours, peer: ndcg(peer.search(q.query, q.filters), q.relevant) });
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const byKind: Relevance['byKind'] = {};
  for (const kind of new Set(rows.map((r) => r.q.kind))) {
    const of = rows.filter((r) => r.q.kind === kind);
    byKind[kind] = { ours: mean(of.map((r) => r.ours)), peer: mean(of.map((r) => r.peer)), n: of.length };
  }
  const worst = [...rows]
    .sort((a, b) => a.ours - a.peer - (b.ours - b.peer))
    .slice(0, 5)
    .map((r) => ({
      id: r.q.id,
      query: r.q.query ?? JSON.stringify(r.q.filters),
      ours: r.ours,
      peer: r.peer,
    }));
  return { ours: mean(rows.map((r) => r.ours)), peer: mean(rows.map((r) => r.peer)), byKind, worst };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await relevance(process.argv[2] ?? 'http://127.0.0.1:8080');
  console.log(JSON.stringify(r, null, 1));
}

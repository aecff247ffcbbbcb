/**
 * A search that matches more than the count's cap (subgraphs/pricing/catalog/search/degrade.ts),
 * as each edge says it: GraphQL's totalCountExact false with totalCount the lower bound; UCP
 * omits pagination.total_count ("if available", types/pagination.json) and stays valid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { COUNT_CAP } from '../../subgraphs/pricing/catalog/search/degrade.ts';
import { expectUcp } from './support/validate.ts';

/** About 1,400 products: more than the cap match every category. */
const SIZE = 3000;

const ALL = [
  'Apparel',
  'Automotive',
  'Beauty',
  'Books',
  'Electronics',
  'Garden',
  'Grocery',
  'Home',
  'Office',
  'Sports',
  'Tools',
  'Toys',
];

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    CATALOG_SIZE: String(SIZE),
    // Searched as a catalog past CATALOG_EXACT_SEARCH_UP_TO products would be.
    CATALOG_EXACT_SEARCH_UP_TO: '0',
    SHED_QUOTE_BUDGET_MS: '0',
    SHED_ORDER_BUDGET_MS: '0',
  });
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({ capabilities: ['checkout', 'catalog.search'] }),
  );
}, 180_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

const gqlCount = async (categories: string[]) => {
  const res = await sys.gql(
    'query ($input: ProductSearchInput!) { searchProducts(input: $input, first: 3) { totalCount totalCountExact } }',
    { variables: { input: { categories } } },
  );
  return res.data?.searchProducts as { totalCount: number; totalCountExact: boolean };
};

describe('a search past the count cap', () => {
  it('GraphQL: totalCount is the cap and totalCountExact false; a narrower search counts exactly', async () => {
    expect(await gqlCount(ALL)).toEqual({ totalCount: COUNT_CAP, totalCountExact: false });
    const office = await gqlCount(['Office']);
    expect(office.totalCountExact).toBe(true);
    expect(office.totalCount).toBeLessThanOrEqual(COUNT_CAP);
    expect(office.totalCount).toBeGreaterThan(0);
  });

  it('UCP: pagination has no total_count, and the response is valid against the vendored schema', async () => {
    const r = await ucpCall(sys.url, { profileUrl }, 'POST', '/catalog/search', {
      filters: { categories: ALL },
      pagination: { limit: 5 },
    });
    expect(r.status).toBe(200);
    expectUcp('catalog_search_response', r.body);
    const pagination = r.body.pagination as Record<string, unknown>;
    expect(pagination).not.toHaveProperty('total_count');
    expect(pagination.has_next_page).toBe(true);
    const narrow = await ucpCall(sys.url, { profileUrl }, 'POST', '/catalog/search', {
      filters: { categories: ['Office'] },
    });
    expect((narrow.body.pagination as Record<string, unknown>).total_count).toBeGreaterThan(0);
  });
});

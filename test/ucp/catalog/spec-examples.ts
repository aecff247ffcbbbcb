/**
 * The catalog pages' own request examples (catalog/rest.md, catalog/mcp.md), replayed against
 * the routes that answer them: a part of ../catalog.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { classifySpecBlock, type SpecExample, specBlocks, UCP_SPEC_PAGES } from '../support/spec-examples.ts';
import { expectUcp } from '../support/validate.ts';
import type { CatalogContext, Json } from './support.ts';

export function specExampleTests(ctx: CatalogContext): void {
  describe("the catalog pages' own request examples, replayed", () => {
    /**
     * Each request a catalog page shows (a REST body, or an MCP call's `arguments.catalog`, which is
     * what the MCP tool hands this same REST route: ucp/tools.ts), and the route that answers it.
     */
    const ROUTES = {
      catalog_search_request: ['/catalog/search', 'catalog_search_response'],
      catalog_lookup_request: ['/catalog/lookup', 'catalog_lookup_response'],
      catalog_get_product_request: ['/catalog/product', 'catalog_get_product_response'],
    } as const;
    const requests = UCP_SPEC_PAGES.filter((p) => p.startsWith('catalog/'))
      .flatMap((p) => specBlocks(p).map(classifySpecBlock))
      .filter((e): e is SpecExample => 'def' in e && e.side === 'request' && e.def in ROUTES);

    it('finds the requests of catalog/rest.md and catalog/mcp.md', () => {
      expect(requests.length).toBeGreaterThanOrEqual(7);
    });

    it.each(requests.map((e) => [e.at, e] as const))('%s: answered as the release says', async (_at, e) => {
      const [path, reply] = ROUTES[e.def as keyof typeof ROUTES];
      const r = await ctx.call(path, e.value);
      // The pages' products are not this catalog's: a product asked for by id is a not_found
      // business outcome (rest.md), a search or lookup an answer with what matched.
      if (reply === 'catalog_get_product_response' && r.body.ucp && (r.body.ucp as Json).status === 'error') {
        expectUcp('error_response', r.body);
        expect(((r.body.messages as Json[])[0] as Json).code).toBe('not_found');
      } else {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expectUcp(reply, r.body);
      }
    });
  });
}

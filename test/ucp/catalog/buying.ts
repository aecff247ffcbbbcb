/**
 * From the catalog to an order: what an agent's spend policy says of each item, an item found
 * then checked out and completed on account, a merchant's own feed searched and bought by its
 * variant ids: a part of ../catalog.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { purchaseOrderPayment, UCP_ADDRESS, ucpCall } from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { expectUcp } from '../support/validate.ts';
import type { CatalogContext, Product, Variant } from './support.ts';

export function buyingTests(ctx: CatalogContext): void {
  describe('an agent with a spend policy', () => {
    it('sees which items its budget does not cover, and which would wait for approval', async () => {
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-catalog-${process.pid}`;
      const set = await ctx.sys.gql(
        'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }',
        {
          token: await ctx.sys.token(['spend:admin']),
          variables: {
            input: {
              subject: spiffeId,
              currency: 'USD',
              period: 'DAY',
              budget: '300.00',
              approvalAbove: '100.00',
            },
          },
        },
      );
      expect(set.errors).toBeUndefined();
      const { key } = await issueKey(ctx.sys, { spiffeId, ucpProfile: ctx.profiles.origin });
      const r = await ctx.call(
        '/catalog/search',
        { query: 'office chair', context: { currency: 'USD' }, pagination: { limit: 50 } },
        { key },
      );
      expectUcp('catalog_search_response', r.body);
      const messages = (r.body.messages ?? []) as { code: string; path: string }[];
      const products = r.body.products as Product[];
      const at = (path: string) => {
        const m = /\$\.products\[(\d+)\]\.variants\[(\d+)\]/.exec(path);
        return products[Number(m?.[1])]?.variants[Number(m?.[2])] as Variant;
      };
      const over = messages.filter((m) => m.code === 'over_budget');
      const approval = messages.filter((m) => m.code === 'approval_required');
      expect(over.length).toBeGreaterThan(0);
      expect(approval.length).toBeGreaterThan(0);
      for (const m of over) expect(at(m.path).price.amount).toBeGreaterThan(30000);
      for (const m of approval) expect(at(m.path).price.amount).toBeGreaterThan(10000);
    });
  });

  describe('found, then bought', () => {
    it('searches, looks up, checks out the item found and completes it on account', async () => {
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-finder-${process.pid}`;
      const { key } = await issueKey(ctx.sys, { spiffeId, ucpProfile: ctx.profiles.origin });
      const found = await ctx.call(
        '/catalog/search',
        { query: 'yoga mat', filters: { available: true } },
        { key },
      );
      const variant = (found.body.products as Product[])[0]?.variants[0] as Variant;
      const looked = await ctx.call('/catalog/lookup', { ids: [variant.id] }, { key });
      expect((looked.body.products as Product[])[0]?.variants[0]?.id).toBe(variant.id);
      const checkout = (method: 'POST' | 'PUT', path: string, body: unknown) =>
        ucpCall(ctx.sys.url, { profileUrl: ctx.profileUrl, key }, method, path, body);
      const created = await checkout('POST', '/checkout-sessions', {
        line_items: [{ item: { id: variant.id }, quantity: 1 }],
        fulfillment: { methods: [{ type: 'shipping', destinations: [UCP_ADDRESS] }] },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect((created.body.line_items as { item: { price: number } }[])[0]?.item.price).toBe(
        variant.price.amount,
      );
      const ready = await checkout('PUT', `/checkout-sessions/${id}`, {
        line_items: [{ item: { id: variant.id }, quantity: 1 }],
        fulfillment: {
          methods: [
            {
              line_item_ids: ['li_0'],
              groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
            },
          ],
        },
      });
      expect(ready.body.status).toBe('ready_for_complete');
      const done = await checkout('POST', `/checkout-sessions/${id}/complete`, {
        payment: purchaseOrderPayment('PO-FOUND-1'),
      });
      expect(done.status).toBe(200);
      expect(done.body.status).toBe('completed');
    });
  });

  describe("a merchant's own feed", () => {
    /** Imports feed lines (PARTIAL) through the GraphQL mutations, as the console and the CLI do. */
    async function importFeed(lines: string[]) {
      const token = await ctx.sys.token(['catalog:admin']);
      const start = await ctx.sys.gql(
        'mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }',
        {
          token,
          variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_ucp', target_country: 'US' } } },
        },
      );
      const id = (start.data?.startCatalogImport as { id: string } | undefined)?.id;
      const append = await ctx.sys.gql(
        'mutation($id: ID!, $lines: [String!]!) { appendCatalogImport(id: $id, firstLine: 1, lines: $lines) { accepted refused } }',
        { token, variables: { id, lines } },
      );
      expect(append.data?.appendCatalogImport).toEqual({ accepted: lines.length, refused: 0 });
      await ctx.sys.gql('mutation($id: ID!) { commitCatalogImport(id: $id) { id } }', {
        token,
        variables: { id },
      });
      for (let i = 0; i < 200; i++) {
        const r = await ctx.sys.gql('query($id: ID!) { catalogImport(id: $id) { status } }', {
          token,
          variables: { id },
        });
        if ((r.data?.catalogImport as { status: string } | undefined)?.status === 'DONE') return;
        await new Promise((ok) => setTimeout(ok, 25));
      }
      throw new Error('the import did not finish');
    }

    it('is searched, looked up by its own variant ids, and checked out by them: the order carries the SKU', async () => {
      await importFeed([
        JSON.stringify({
          id: 'lamp-aurora',
          title: 'Aurora Arc Floor Lamp',
          description: { plain: 'An arc floor lamp with a marble base.' },
          variants: [
            {
              id: 'lamp-aurora-brass',
              title: 'Aurora Arc Floor Lamp - Brass',
              price: { amount: 18900, currency: 'USD' },
              availability: { available: true, status: 'in_stock' },
              categories: [{ value: 'Home > Lighting', taxonomy: 'merchant' }],
              variant_options: [{ name: 'Finish', value: 'Brass' }],
            },
          ],
        }),
      ]);
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-feed-${process.pid}`;
      const { key } = await issueKey(ctx.sys, { spiffeId, ucpProfile: ctx.profiles.origin });
      const found = await ctx.call('/catalog/search', { query: 'arc floor lamp' }, { key });
      expectUcp('catalog_search_response', found.body);
      const variant = (found.body.products as Product[])[0]?.variants[0] as Variant;
      expect(variant.id).toBe('lamp-aurora-brass');
      expect(variant.sku).toMatch(/^SKU-HOM-\d{6}$/);
      const created = await ucpCall(
        ctx.sys.url,
        { profileUrl: ctx.profileUrl, key },
        'POST',
        '/checkout-sessions',
        {
          line_items: [{ item: { id: 'lamp-aurora-brass' }, quantity: 2 }],
        },
      );
      expect(created.status).toBe(201);
      const line = (created.body.line_items as { item: { id: string; price: number } }[])[0];
      expect(line).toMatchObject({ item: { id: 'lamp-aurora-brass', price: 18900 } });
    });
  });
}

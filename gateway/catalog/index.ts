import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { SubgraphModule, SubgraphName } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { trigramSchema } from '../../subgraphs/pricing/catalog/migrations.ts';
import { type CatalogProducts, createSqlCatalogProducts } from '../../subgraphs/pricing/catalog/products.ts';
import type { PricingModule } from '../../subgraphs/pricing/index.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import type { QuoteService } from '../edge/quote/service.ts';
import { type CatalogService, createCatalogService } from './service.ts';

/**
 * The catalog's products port of this process: the pricing module's when it runs here (embedded),
 * else the same statements on the PostgreSQL pricing owns (distributed: the gateway reads the
 * catalog there already for the quote's static prices; gateway/edge/quote/index.ts). Cursors are
 * signed with the shared secret, so any replica continues a page another one gave.
 */
async function productsFor(
  platform: Platform,
  local: Partial<Record<SubgraphName, SubgraphModule>>,
): Promise<CatalogProducts> {
  const pricing = local.pricing as PricingModule | undefined;
  if (pricing?.catalogProducts) return pricing.catalogProducts;
  const products = createSqlCatalogProducts(platform.db, {
    trigram: await trigramSchema(platform.db),
    secret: platform.config.GATEWAY_SHARED_SECRET,
    exactUpTo: platform.config.CATALOG_EXACT_SEARCH_UP_TO,
    rememberMs: platform.config.CATALOG_REMEMBER_MS,
    clock: platform.clock,
  });
  // Corrections learnt from the catalog's words are forgotten when an import changes it.
  platform.onClose(platform.bus.subscribe(EventTypes.CatalogChanged, () => products.catalogChanged()));
  return products;
}

/** The catalog service the gateway's edges (UCP, MCP) share. */
export async function catalogServiceFor(
  platform: Platform,
  local: Partial<Record<SubgraphName, SubgraphModule>>,
  quotes: Pick<QuoteService, 'offers'>,
  ledger: SpendLedger,
): Promise<CatalogService> {
  return createCatalogService({
    products: await productsFor(platform, local),
    offers: (skus, ctx) => quotes.offers(skus, ctx),
    ledger,
    clock: platform.clock,
  });
}

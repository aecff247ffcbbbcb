/**
 * The catalog as a merchant knows it (ACP's feed `Product`/`Variant`, which UCP's `product` and
 * `variant` mirror): a product groups one or more variants; a variant is what is bought, a SKU in
 * the spec's pattern, with the merchant's own variant id beside it. Amounts are exact decimal
 * texts ("19.99"), as everywhere in the catalog. Protocol-neutral: each edge (GraphQL, UCP, ACP,
 * MCP) renders these in its own shape.
 */

export interface Description {
  readonly plain: string;
  readonly html?: string;
}

export interface Media {
  readonly type: string;
  readonly url: string;
  readonly altText?: string;
  readonly width?: number;
  readonly height?: number;
}

/** Media as the ACP feed writes them (snake case), the shape the catalog also stores. */
export const mediaJson = (m: readonly Media[]) =>
  m.map((x) => ({
    type: x.type,
    url: x.url,
    ...(x.altText !== undefined ? { alt_text: x.altText } : {}),
    ...(x.width !== undefined ? { width: x.width } : {}),
    ...(x.height !== undefined ? { height: x.height } : {}),
  }));

/** One option of a variant: `{ name: 'Color', value: 'Black' }`. */
export interface OptionValue {
  readonly name: string;
  readonly value: string;
}

/** An option of a product and the values its variants take, in display order. */
export interface ProductOption {
  readonly name: string;
  readonly values: readonly string[];
}

export interface Barcode {
  readonly type: string;
  readonly value: string;
}

/**
 * Fulfilment state of a variant, ACP's known values (the feed's `availability.status`). A
 * variant that has none is judged by its stock: 0 out of stock, under 10 limited, else in stock.
 */
export const AVAILABILITY = [
  'in_stock',
  'limited_stock',
  'backorder',
  'preorder',
  'out_of_stock',
  'discontinued',
] as const;
export type AvailabilityStatus = (typeof AVAILABILITY)[number];

/** Whether a variant in this state can be bought now. */
export const purchasable = (status: string): boolean =>
  status === 'in_stock' || status === 'limited_stock' || status === 'backorder' || status === 'preorder';

export const availabilityOf = (stored: string | null | undefined, inventoryLevel: number): string =>
  stored ?? (inventoryLevel <= 0 ? 'out_of_stock' : inventoryLevel < 10 ? 'limited_stock' : 'in_stock');

export interface CatalogVariantInput {
  readonly sku: string;
  /** The merchant's own id for it (its feed's `Variant.id`); the SKU when it has none. */
  readonly variantId: string;
  readonly title: string;
  /** The name a quote line shows: the product's title, and the variant's when there are several. */
  readonly name: string;
  /** The SKU's category, as promotions match it (lower case: `office`). */
  readonly category: string;
  readonly inventoryLevel: number;
  /** Base price by currency, exact decimal text. */
  readonly prices: Readonly<Record<string, string>>;
  /** Reference ("was") price by currency, when the merchant gives one. */
  readonly listPrices?: Readonly<Record<string, string>>;
  /** Stored fulfilment state; absent: from the stock (`availabilityOf`). */
  readonly availability?: string;
  readonly options: readonly OptionValue[];
  readonly barcodes: readonly Barcode[];
  readonly media: readonly Media[];
  readonly url?: string;
  readonly seller?: string;
  readonly description?: Description;
}

export interface CatalogProductInput {
  readonly productId: string;
  readonly handle?: string;
  readonly title: string;
  readonly description: Description;
  readonly url?: string;
  readonly brand?: string;
  /** Taxonomy paths, "Office > Chairs". */
  readonly categories: readonly string[];
  readonly condition: string;
  readonly media: readonly Media[];
  readonly options: readonly ProductOption[];
  readonly tags: readonly string[];
  readonly variants: readonly CatalogVariantInput[];
}

/** A variant as read back: its stored fields and its availability now. */
export interface CatalogVariant extends CatalogVariantInput {
  readonly availability: string;
  readonly available: boolean;
}

export interface CatalogProduct extends Omit<CatalogProductInput, 'variants'> {
  readonly variants: readonly CatalogVariant[];
}

/**
 * Every prefix of a taxonomy path, lower case: "Office > Chairs" → ["office", "office > chairs"],
 * so a filter on a category finds the products of its sub-categories too.
 */
export function categoryPaths(categories: readonly string[]): string[] {
  const out = new Set<string>();
  for (const c of categories) {
    const parts = c
      .split('>')
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean);
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join(' > '));
  }
  return [...out];
}

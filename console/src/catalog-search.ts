/**
 * The Catalog page's search: what the operator typed and clicked, as the API's
 * `ProductSearchInput` (schemas/pricing.graphql). Filtering, spelling correction and counting
 * are the API's; the page only keeps the choices and sends them (the persisted SearchProducts).
 */
import { operation } from './operations.ts';

export const SEARCH_PRODUCTS: string = operation('SearchProducts');
export const CATALOG_PRODUCT: string = operation('CatalogProduct');

/** Products a page holds (the API's default is 10, its most 50). */
export const PAGE_SIZE = 20;

export interface OptionChoice {
  /** The option's name as the facets give it (lower case). */
  name: string;
  values: string[];
}

/** The search as the operator set it: the text box, the filter fields and the facets clicked. */
export interface CatalogSearch {
  query: string;
  categories: string[];
  brands: string[];
  conditions: string[];
  /** The currency of the price filter, of the price bands and of each product's price range. */
  currency: string;
  /** Decimal text as typed; empty: no bound. */
  minPrice: string;
  maxPrice: string;
  availableOnly: boolean;
  options: OptionChoice[];
}

export const EMPTY_CATALOG_SEARCH: CatalogSearch = {
  query: '',
  categories: [],
  brands: [],
  conditions: [],
  currency: 'USD',
  minPrice: '',
  maxPrice: '',
  availableOnly: false,
  options: [],
};

/** A facet value the operator can click: it adds the filter, or takes it off when it is on. */
export type FacetPick =
  | { kind: 'category' | 'brand' | 'condition'; value: string }
  | { kind: 'option'; name: string; value: string }
  | { kind: 'available' }
  | { kind: 'price'; minDecimal: string; maxDecimal: string | null };

const LISTS = { category: 'categories', brand: 'brands', condition: 'conditions' } as const;

const currencyOf = (s: CatalogSearch) => s.currency.trim().toUpperCase();

/**
 * The API's input: empty fields and lists are left out (no filter), the price only when a bound
 * is given, amounts sent as typed (the API refuses what is not a decimal of the currency, and the
 * page shows its words). Option names and values go as the facets gave them.
 */
export function searchInput(s: CatalogSearch): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const query = s.query.trim();
  if (query) input.query = query;
  if (s.categories.length) input.categories = [...s.categories];
  if (s.brands.length) input.brands = [...s.brands];
  if (s.conditions.length) input.conditions = [...s.conditions];
  const min = s.minPrice.trim();
  const max = s.maxPrice.trim();
  if (min || max)
    input.price = {
      currency: currencyOf(s),
      ...(min ? { minDecimal: min } : {}),
      ...(max ? { maxDecimal: max } : {}),
    };
  if (s.availableOnly) input.availableOnly = true;
  const options = s.options.filter((o) => o.values.length > 0);
  if (options.length) input.options = options.map((o) => ({ name: o.name, values: [...o.values] }));
  return input;
}

/** Whether the API will search: it needs a query or at least one filter. */
export function hasCriteria(s: CatalogSearch): boolean {
  return Object.keys(searchInput(s)).length > 0;
}

/** The SearchProducts variables of one page (`after`: the endCursor of the page before). */
export function searchVariables(s: CatalogSearch, after: string | null): Record<string, unknown> {
  return { input: searchInput(s), first: PAGE_SIZE, after, currency: currencyOf(s) || 'USD' };
}

const toggled = (list: readonly string[], value: string) =>
  list.includes(value) ? list.filter((v) => v !== value) : [...list, value];

/** Whether a facet value is one of the search's filters now. */
export function isPicked(s: CatalogSearch, pick: FacetPick): boolean {
  switch (pick.kind) {
    case 'available':
      return s.availableOnly;
    case 'price':
      return s.minPrice.trim() === pick.minDecimal && s.maxPrice.trim() === (pick.maxDecimal ?? '');
    case 'option':
      return s.options.some((o) => o.name === pick.name && o.values.includes(pick.value));
    default:
      return s[LISTS[pick.kind]].includes(pick.value);
  }
}

/** The search after a facet value is clicked: its filter added, or removed when it was on. */
export function toggleFacet(s: CatalogSearch, pick: FacetPick): CatalogSearch {
  switch (pick.kind) {
    case 'available':
      return { ...s, availableOnly: !s.availableOnly };
    case 'price':
      return isPicked(s, pick)
        ? { ...s, minPrice: '', maxPrice: '' }
        : { ...s, minPrice: pick.minDecimal, maxPrice: pick.maxDecimal ?? '' };
    case 'option': {
      const found = s.options.some((o) => o.name === pick.name);
      const options = found
        ? s.options.map((o) => (o.name === pick.name ? { ...o, values: toggled(o.values, pick.value) } : o))
        : [...s.options, { name: pick.name, values: [pick.value] }];
      return { ...s, options: options.filter((o) => o.values.length > 0) };
    }
    default: {
      const key = LISTS[pick.kind];
      return { ...s, [key]: toggled(s[key], pick.value) };
    }
  }
}

/** The filters on now, each as the facet that takes it off (the page lists them as chips). */
export function activeFilters(s: CatalogSearch): { label: string; pick: FacetPick }[] {
  const out: { label: string; pick: FacetPick }[] = [];
  for (const value of s.categories)
    out.push({ label: `category: ${value}`, pick: { kind: 'category', value } });
  for (const value of s.brands) out.push({ label: `brand: ${value}`, pick: { kind: 'brand', value } });
  for (const value of s.conditions)
    out.push({ label: `condition: ${value}`, pick: { kind: 'condition', value } });
  for (const o of s.options)
    for (const value of o.values)
      out.push({ label: `${o.name}: ${value}`, pick: { kind: 'option', name: o.name, value } });
  if (s.availableOnly) out.push({ label: 'available now', pick: { kind: 'available' } });
  const min = s.minPrice.trim();
  const max = s.maxPrice.trim();
  if (min || max)
    out.push({
      label: `price ${min || '0'}–${max || '…'} ${currencyOf(s)}`,
      pick: { kind: 'price', minDecimal: min, maxDecimal: max || null },
    });
  return out;
}

/** What SearchProducts answers (the fields the page reads). */
export interface FacetCount {
  value: string;
  count: number;
}

export interface SearchFacets {
  categories: FacetCount[];
  brands: FacetCount[];
  conditions: FacetCount[];
  options: { name: string; values: FacetCount[] }[];
  availability: { available: number; unavailable: number };
  prices: { minDecimal: string; maxDecimal: string | null; count: number }[];
}

export interface ProductHit {
  id: string;
  title: string;
  brand: string | null;
  categories: string[];
  priceRange: { currency: string; minDecimal: string; maxDecimal: string } | null;
  variants: { sku: string; available: boolean }[];
}

export interface SearchPage {
  totalCount: number;
  /** False: totalCount is a lower bound (more matched). */
  totalCountExact: boolean;
  correctedQuery: string | null;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  facets: SearchFacets;
  nodes: ProductHit[];
}

/** What CatalogProduct answers. */
export interface CatalogPrice {
  currency: string;
  amountDecimal: string;
}

export interface Variant {
  sku: string;
  variantId: string;
  title: string;
  options: { name: string; value: string }[];
  barcodes: { type: string; value: string }[];
  availability: string;
  available: boolean;
  inventoryLevel: number;
  basePrices: CatalogPrice[];
  listPrices: CatalogPrice[];
  quote: {
    currency: string;
    lines: { unitPriceDecimal: string; appliedModifiers: string[]; source: string }[];
    promotions: { discountTotalDecimal: string; totalDecimal: string; applied: { name: string }[] };
  };
}

export interface CatalogProduct {
  id: string;
  handle: string | null;
  title: string;
  descriptionPlain: string;
  url: string | null;
  brand: string | null;
  categories: string[];
  condition: string;
  tags: string[];
  options: { name: string; values: string[] }[];
  variants: Variant[];
}

/** The caller's context for the variants' quotes (ProductQuoteInput). */
export interface QuoteContext {
  currency: string;
  region: string;
  customerSegment: string;
}

export function quoteInput(q: QuoteContext): Record<string, unknown> {
  const segment = q.customerSegment.trim();
  return {
    currency: q.currency.trim().toUpperCase(),
    region: q.region.trim(),
    ...(segment ? { customerSegment: segment } : {}),
  };
}

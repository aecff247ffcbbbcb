/**
 * A catalog search as the domain takes it, whatever the protocol it came by (GraphQL, UCP REST or
 * MCP, this system's MCP tool): normalised and checked here, once, purely. Every refusal is a
 * SearchInputError with a JSON pointer into the request, which each edge renders in its own
 * error body (a 400, UCP's `invalid_request`, GraphQL's BAD_USER_INPUT).
 */

export class SearchInputError extends Error {
  constructor(
    readonly pointer: string,
    message: string,
    /** `empty`: no query and no filter; `too_large`: over a size limit; else `invalid`. */
    readonly kind: 'empty' | 'too_large' | 'invalid' = 'invalid',
  ) {
    super(message);
  }
}

/** At most this many characters of query text (after normalising), and this many words. */
export const MAX_QUERY_CHARS = 256;
export const MAX_QUERY_WORDS = 24;
/** Page sizes: the default, and the most a page holds (a larger `limit` is clamped, as UCP allows). */
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 50;
/** List filters hold at most this many values each. */
export const MAX_FILTER_VALUES = 50;
const MAX_VALUE_CHARS = 200;

export interface PriceFilter {
  readonly currency: string;
  /** Minor units (cents), inclusive. */
  readonly min?: number;
  readonly max?: number;
}

export interface OptionFilter {
  readonly name: string;
  readonly values: readonly string[];
}

export interface SearchFilters {
  /** Taxonomy paths or their first levels, lower case; a product in any of them (or below) matches. */
  readonly categories?: readonly string[];
  /** Brands, lower case; any of them. */
  readonly brands?: readonly string[];
  readonly price?: PriceFilter;
  /** Only products with a variant that can be bought now. */
  readonly available?: boolean;
  /** Per option, any of its values; all options given must hold (on one variant). */
  readonly options?: readonly OptionFilter[];
  readonly conditions?: readonly string[];
  /** Only variants (and products with one) that have a price in this currency: what a shopper there can buy. */
  readonly pricedIn?: string;
}

export interface SearchRequest {
  /** Normalised free text; absent: a browse by the filters alone. */
  readonly query?: string;
  readonly filters: SearchFilters;
  readonly limit: number;
  readonly cursor?: string;
  /** Count categories, brands, options, availability and price bands over every match. */
  readonly facets: boolean;
  /**
   * Read each product's variants (with their prices). A caller that shows none (a GraphQL query
   * that selects neither `variants` nor `priceRange`) passes false, and its products come with
   * none: building them is most of a page's cost.
   */
  readonly variants: boolean;
}

/** What the edges hand in, loosely typed: each field is checked here. */
export interface SearchInput {
  query?: unknown;
  filters?: {
    categories?: unknown;
    brands?: unknown;
    price?: { currency?: unknown; min?: unknown; max?: unknown } | unknown;
    available?: unknown;
    options?: unknown;
    conditions?: unknown;
    pricedIn?: unknown;
  };
  limit?: unknown;
  cursor?: unknown;
  facets?: unknown;
  /** False: the products without their variants (SearchRequest.variants). */
  variants?: unknown;
}

/**
 * NFKC, no control characters (NUL included, which PostgreSQL refuses in text), whitespace
 * collapsed. What is left of a query made only of operators or quotes is whatever words remain;
 * websearch_to_tsquery reads the rest (quotes, `or`, `-`) and never fails on syntax.
 */
export function normaliseText(s: string): string {
  return s
    .normalize('NFKC')
    .replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function stringList(v: unknown, pointer: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new SearchInputError(pointer, 'must be an array of strings');
  if (v.length > MAX_FILTER_VALUES)
    throw new SearchInputError(pointer, `holds more than ${MAX_FILTER_VALUES} values`, 'too_large');
  const out = v.map((x, i) => {
    if (typeof x !== 'string') throw new SearchInputError(`${pointer}/${i}`, 'must be a string');
    const s = normaliseText(x);
    if (s.length === 0 || s.length > MAX_VALUE_CHARS)
      throw new SearchInputError(`${pointer}/${i}`, `must hold 1 to ${MAX_VALUE_CHARS} characters`);
    return s;
  });
  return out.length > 0 ? [...new Set(out)] : undefined;
}

function minorUnits(v: unknown, pointer: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new SearchInputError(pointer, 'must be a whole, non-negative number of minor units (cents)');
  return v;
}

function priceFilter(v: unknown, pointer: string): PriceFilter | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new SearchInputError(pointer, 'must be an object');
  const currency = typeof v.currency === 'string' ? v.currency.toUpperCase() : undefined;
  if (!currency || !/^[A-Z]{3}$/.test(currency))
    throw new SearchInputError(`${pointer}/currency`, 'must be an ISO 4217 code such as USD');
  const min = minorUnits(v.min, `${pointer}/min`);
  const max = minorUnits(v.max, `${pointer}/max`);
  if (min !== undefined && max !== undefined && min > max)
    throw new SearchInputError(pointer, 'min must not exceed max');
  if (min === undefined && max === undefined) return undefined;
  return { currency, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
}

function optionFilters(v: unknown, pointer: string): OptionFilter[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new SearchInputError(pointer, 'must be an array of {name, values}');
  if (v.length > 10) throw new SearchInputError(pointer, 'holds more than 10 options', 'too_large');
  const out = v.map((o, i) => {
    if (!isObject(o) || typeof o.name !== 'string')
      throw new SearchInputError(`${pointer}/${i}`, 'must be {name, values}');
    const name = normaliseText(o.name).toLowerCase();
    const values = stringList(o.values, `${pointer}/${i}/values`);
    if (!name || !values)
      throw new SearchInputError(`${pointer}/${i}`, 'needs a name and at least one value');
    return { name, values: values.map((x) => x.toLowerCase()) };
  });
  return out.length > 0 ? out : undefined;
}

/** Checks and normalises a search; throws SearchInputError. */
export function searchRequest(input: SearchInput): SearchRequest {
  let query: string | undefined;
  if (input.query !== undefined && input.query !== null) {
    if (typeof input.query !== 'string') throw new SearchInputError('/query', 'must be a string');
    // Checked before normalising too: a 100 kB query is refused without being read whole.
    if (input.query.length > MAX_QUERY_CHARS * 4)
      throw new SearchInputError('/query', `is longer than ${MAX_QUERY_CHARS} characters`, 'too_large');
    const q = normaliseText(input.query);
    if (q.length > MAX_QUERY_CHARS)
      throw new SearchInputError('/query', `is longer than ${MAX_QUERY_CHARS} characters`, 'too_large');
    if (q.split(' ').length > MAX_QUERY_WORDS)
      throw new SearchInputError('/query', `has more than ${MAX_QUERY_WORDS} words`, 'too_large');
    if (q.length > 0) query = q;
  }
  const f = input.filters;
  if (f !== undefined && f !== null && !isObject(f))
    throw new SearchInputError('/filters', 'must be an object');
  const categories = stringList(f?.categories, '/filters/categories')?.map((c) =>
    c
      .split('>')
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean)
      .join(' > '),
  );
  const brands = stringList(f?.brands, '/filters/brands')?.map((b) => b.toLowerCase());
  const price = priceFilter(f?.price, '/filters/price');
  const options = optionFilters(f?.options, '/filters/options');
  const conditions = stringList(f?.conditions, '/filters/conditions')?.map((c) => c.toLowerCase());
  let pricedIn: string | undefined;
  if (f?.pricedIn !== undefined && f?.pricedIn !== null) {
    if (typeof f.pricedIn !== 'string' || !/^[A-Za-z]{3}$/.test(f.pricedIn))
      throw new SearchInputError('/filters/pricedIn', 'must be an ISO 4217 code such as USD');
    pricedIn = f.pricedIn.toUpperCase();
  }
  let available: boolean | undefined;
  if (f?.available !== undefined && f?.available !== null) {
    if (typeof f.available !== 'boolean')
      throw new SearchInputError('/filters/available', 'must be a boolean');
    available = f.available || undefined;
  }
  const filters: SearchFilters = {
    ...(categories ? { categories } : {}),
    ...(brands ? { brands } : {}),
    ...(price ? { price } : {}),
    ...(available ? { available } : {}),
    ...(options ? { options } : {}),
    ...(conditions ? { conditions } : {}),
  };
  // Where the caller can buy is not what it looks for: it narrows, it does not make a search.
  if (query === undefined && Object.keys(filters).length === 0)
    throw new SearchInputError('', 'a search needs a query or at least one filter', 'empty');

  let limit = DEFAULT_LIMIT;
  if (input.limit !== undefined && input.limit !== null) {
    if (typeof input.limit !== 'number' || !Number.isSafeInteger(input.limit) || input.limit < 1)
      throw new SearchInputError('/limit', 'must be a whole number of at least 1');
    limit = Math.min(input.limit, MAX_LIMIT);
  }
  let cursor: string | undefined;
  if (input.cursor !== undefined && input.cursor !== null) {
    if (typeof input.cursor !== 'string' || input.cursor.length === 0 || input.cursor.length > 512)
      throw new SearchInputError('/cursor', 'is not a cursor this catalog gave');
    cursor = input.cursor;
  }
  return {
    ...(query ? { query } : {}),
    filters: { ...filters, ...(pricedIn ? { pricedIn } : {}) },
    limit,
    ...(cursor ? { cursor } : {}),
    facets: input.facets === true,
    variants: input.variants !== false,
  };
}

/**
 * Catalog (issue 47): the catalog searched as a storefront searches it (GraphQL
 * `searchProducts`: typo-tolerant text, filters, facets counted by the API and clickable, cursor
 * pages), one product with its variants and prices (`catalogProduct`, each variant's `quote` in
 * the operator's context), and the import of a merchant's ACP feed (catalog-import.tsx).
 */
import { useState } from 'preact/hooks';
import { formatAmount } from '../amounts.ts';
import { graphql } from '../api.ts';
import {
  activeFilters,
  CATALOG_PRODUCT,
  type CatalogProduct,
  type CatalogSearch,
  EMPTY_CATALOG_SEARCH,
  type FacetPick,
  hasCriteria,
  isPicked,
  PAGE_SIZE,
  type QuoteContext,
  quoteInput,
  SEARCH_PRODUCTS,
  type SearchFacets,
  type SearchPage,
  searchVariables,
  toggleFacet,
} from '../catalog-search.ts';
import { navigate } from '../router.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Link, Loading, ProblemView } from '../ui/parts.tsx';
import { CatalogImportPanel } from './catalog-import.tsx';

export function CatalogPage({ params }: { params: URLSearchParams }) {
  const productId = params.get('product');
  const [form, setForm] = useState<CatalogSearch>(EMPTY_CATALOG_SEARCH);
  // The submitted search, and the cursors of the pages before this one (Previous pops one).
  const [search, setSearch] = useState<CatalogSearch | null>(null);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [context, setContext] = useState<QuoteContext>({
    currency: 'USD',
    region: 'US',
    customerSegment: '',
  });
  const after = cursors[cursors.length - 1] ?? null;
  const results = useAsync(
    () =>
      search && hasCriteria(search)
        ? graphql<{ searchProducts: SearchPage }>(SEARCH_PRODUCTS, searchVariables(search, after)).then(
            (d) => d.searchProducts,
          )
        : Promise.resolve(null),
    [search, after],
  );
  const run = (next: CatalogSearch) => {
    setForm(next);
    setSearch(next);
    setCursors([null]);
  };
  const pick = (p: FacetPick) => run(toggleFacet(search ?? form, p));
  const page = results.state === 'ok' ? results.data : null;
  const text = (name: 'query' | 'currency' | 'minPrice' | 'maxPrice') => ({
    value: form[name],
    onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [name]: e.currentTarget.value }),
  });
  const chips = search ? activeFilters(search) : [];
  return (
    <section aria-labelledby="catalog-h">
      <h1 id="catalog-h">Catalog</h1>
      <form
        class="filters"
        aria-label="Search the catalog"
        onSubmit={(e) => {
          e.preventDefault();
          run({ ...form });
        }}
      >
        <label>
          Search products <input type="search" {...text('query')} placeholder="ergonomic chair" />
        </label>
        <label>
          Currency <input size={4} {...text('currency')} />
        </label>
        <label>
          Price from <input inputMode="decimal" size={8} {...text('minPrice')} />
        </label>
        <label>
          Price to <input inputMode="decimal" size={8} {...text('maxPrice')} />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={form.availableOnly}
            onChange={(e) => setForm({ ...form, availableOnly: e.currentTarget.checked })}
          />{' '}
          Available now only
        </label>
        <button type="submit">Search</button>
      </form>
      {chips.length > 0 ? (
        <ul class="plain chips" aria-label="Filters on">
          {chips.map((c) => (
            <li key={c.label}>
              <button type="button" class="secondary" onClick={() => pick(c.pick)}>
                Remove {c.label}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {productId ? <ProductView id={productId} context={context} onContext={setContext} /> : null}
      {search === null ? (
        <Empty>Type words to look for, or choose a filter, and press Search.</Empty>
      ) : !hasCriteria(search) ? (
        <Empty>The API searches with words or at least one filter: type some, or choose one.</Empty>
      ) : null}
      {results.state === 'error' ? <ProblemView error={results.error} /> : null}
      {results.state === 'loading' ? <Loading what="products" /> : null}
      {page ? (
        <div class="catalog">
          <Facets facets={page.facets} search={search ?? form} onPick={pick} />
          <div>
            <p role="status" data-testid="search-summary">
              {page.totalCount}
              {page.totalCountExact ? '' : '+'} {page.totalCount === 1 ? 'product' : 'products'}
              {page.correctedQuery ? (
                <>
                  {' '}
                  for <q>{page.correctedQuery}</q> (corrected from <q>{search?.query.trim()}</q>)
                </>
              ) : null}
            </p>
            {page.nodes.length === 0 ? (
              <Empty>No product matches.</Empty>
            ) : (
              <Results page={page} cursors={cursors} />
            )}
            <div class="toolbar">
              {cursors.length > 1 ? (
                <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
                  Previous page
                </button>
              ) : null}
              {page.pageInfo.hasNextPage && page.pageInfo.endCursor ? (
                <button
                  type="button"
                  onClick={() => setCursors([...cursors, page.pageInfo.endCursor as string])}
                >
                  Next page
                </button>
              ) : null}
            </div>
          </div>
        </div>
      ) : null}
      <CatalogImportPanel />
    </section>
  );
}

function Results({ page, cursors }: { page: SearchPage; cursors: (string | null)[] }) {
  const from = (cursors.length - 1) * PAGE_SIZE + 1;
  return (
    <div class="scroll">
      <table data-testid="products">
        <caption>
          Products {from}–{from + page.nodes.length - 1} of {page.totalCount}
          {page.totalCountExact ? '' : '+'}, best match first
        </caption>
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">Brand</th>
            <th scope="col">Category</th>
            <th scope="col">Price</th>
            <th scope="col">Variants</th>
          </tr>
        </thead>
        <tbody>
          {page.nodes.map((p) => (
            <tr key={p.id}>
              <td>
                <Link to={`catalog?product=${encodeURIComponent(p.id)}`}>{p.title}</Link>
              </td>
              <td>{p.brand ?? '—'}</td>
              <td>{p.categories.join('; ')}</td>
              <td class="num">
                {p.priceRange
                  ? p.priceRange.minDecimal === p.priceRange.maxDecimal
                    ? `${formatAmount(p.priceRange.minDecimal)} ${p.priceRange.currency}`
                    : `${formatAmount(p.priceRange.minDecimal)}–${formatAmount(p.priceRange.maxDecimal)} ${p.priceRange.currency}`
                  : '—'}
              </td>
              <td class="num">
                {p.variants.length} ({p.variants.filter((v) => v.available).length} available)
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The API's counts over every match; each value a toggle button (pressed: its filter is on). */
function Facets({
  facets,
  search,
  onPick,
}: {
  facets: SearchFacets;
  search: CatalogSearch;
  onPick: (p: FacetPick) => void;
}) {
  const group = (title: string, items: { label: string; count: number; pick: FacetPick }[]) =>
    items.length === 0 ? null : (
      <section class="facet" aria-label={title}>
        <h2>{title}</h2>
        <ul class="plain">
          {items.map((i) => (
            <li key={i.label}>
              <button
                type="button"
                class="facet-value"
                aria-pressed={isPicked(search, i.pick)}
                onClick={() => onPick(i.pick)}
              >
                {i.label} <span class="count">{i.count}</span>
              </button>
            </li>
          ))}
        </ul>
      </section>
    );
  const currency = search.currency.trim().toUpperCase();
  return (
    <aside class="facets" aria-label="Facets" data-testid="facets">
      {group(
        'Category',
        facets.categories.map((f) => ({
          label: f.value,
          count: f.count,
          pick: { kind: 'category', value: f.value },
        })),
      )}
      {group(
        'Brand',
        facets.brands.map((f) => ({
          label: f.value,
          count: f.count,
          pick: { kind: 'brand', value: f.value },
        })),
      )}
      {group('Availability', [
        { label: 'Available now', count: facets.availability.available, pick: { kind: 'available' } },
      ])}
      {group(
        `Price (${currency})`,
        facets.prices.map((b) => ({
          label: b.maxDecimal
            ? `${formatAmount(b.minDecimal)}–${formatAmount(b.maxDecimal)}`
            : `${formatAmount(b.minDecimal)} and up`,
          count: b.count,
          pick: { kind: 'price', minDecimal: b.minDecimal, maxDecimal: b.maxDecimal },
        })),
      )}
      {facets.options.map((o) =>
        group(
          `Option: ${o.name}`,
          o.values.map((f) => ({
            label: f.value,
            count: f.count,
            pick: { kind: 'option', name: o.name, value: f.value },
          })),
        ),
      )}
      {group(
        'Condition',
        facets.conditions.map((f) => ({
          label: f.value,
          count: f.count,
          pick: { kind: 'condition', value: f.value },
        })),
      )}
    </aside>
  );
}

const prices = (list: { currency: string; amountDecimal: string }[]) =>
  list.length === 0 ? '—' : list.map((p) => `${formatAmount(p.amountDecimal)} ${p.currency}`).join(', ');

function ProductView({
  id,
  context,
  onContext,
}: {
  id: string;
  context: QuoteContext;
  onContext: (c: QuoteContext) => void;
}) {
  const [draft, setDraft] = useState(context);
  const product = useAsync(
    () =>
      graphql<{ catalogProduct: CatalogProduct | null }>(CATALOG_PRODUCT, {
        id,
        quote: quoteInput(context),
      }).then((d) => d.catalogProduct),
    [id, context],
  );
  const p = product.state === 'ok' ? product.data : null;
  const field = (name: keyof QuoteContext) => ({
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) =>
      setDraft({ ...draft, [name]: e.currentTarget.value }),
  });
  return (
    <section class="panel" aria-labelledby="product-h" data-testid="product">
      <h2 id="product-h">{p ? p.title : `Product ${id}`}</h2>
      {product.state === 'loading' ? <Loading what="the product" /> : null}
      {product.state === 'error' ? <ProblemView error={product.error} /> : null}
      {product.state === 'ok' && !p ? <Empty>The catalog has no product {id}.</Empty> : null}
      {p ? (
        <>
          <p>
            <code>{p.id}</code>
            {p.brand ? ` · ${p.brand}` : ''} · {p.categories.join('; ')} · {p.condition}
            {p.url ? (
              <>
                {' '}
                · <a href={p.url}>merchant page</a>
              </>
            ) : null}
          </p>
          <p class="muted">{p.descriptionPlain}</p>
          <form
            class="filters"
            aria-label="Price for"
            onSubmit={(e) => {
              e.preventDefault();
              onContext({ ...draft });
            }}
          >
            <label>
              Quote currency <input size={4} {...field('currency')} />
            </label>
            <label>
              Region <input size={6} {...field('region')} />
            </label>
            <label>
              Customer segment <input size={8} {...field('customerSegment')} placeholder="none" />
            </label>
            <button type="submit">Price for this caller</button>
          </form>
          <div class="scroll">
            <table data-testid="variants">
              <caption>
                {p.variants.length} {p.variants.length === 1 ? 'variant' : 'variants'}; the caller pays one
                unit in {context.currency.toUpperCase()}, region {context.region}
                {context.customerSegment ? `, segment ${context.customerSegment}` : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">SKU</th>
                  <th scope="col">Feed variant id</th>
                  <th scope="col">Variant</th>
                  <th scope="col">Options</th>
                  <th scope="col">Availability</th>
                  <th scope="col">Stock</th>
                  <th scope="col">Base prices</th>
                  <th scope="col">List price</th>
                  <th scope="col">Caller pays</th>
                </tr>
              </thead>
              <tbody>
                {p.variants.map((v) => {
                  const line = v.quote.lines[0];
                  const promotions = v.quote.promotions;
                  return (
                    <tr key={v.sku}>
                      <td>
                        <code>{v.sku}</code>
                      </td>
                      <td>
                        <code>{v.variantId}</code>
                      </td>
                      <td>{v.title}</td>
                      <td>{v.options.map((o) => `${o.name}: ${o.value}`).join(', ') || '—'}</td>
                      <td>
                        <span class={`tag ${v.available ? 'good' : 'bad'}`}>{v.availability}</span>
                      </td>
                      <td class="num">{v.inventoryLevel}</td>
                      <td class="num">{prices(v.basePrices)}</td>
                      <td class="num">{prices(v.listPrices)}</td>
                      <td class="num">
                        {formatAmount(promotions.totalDecimal)} {v.quote.currency}
                        {line ? (
                          <span class="muted" title={line.appliedModifiers.join(', ') || 'no modifier'}>
                            {' '}
                            (unit {formatAmount(line.unitPriceDecimal)}, {line.source.toLowerCase()}
                            {promotions.applied.length
                              ? `, ${promotions.applied.map((a) => a.name).join(', ')} −${formatAmount(promotions.discountTotalDecimal)}`
                              : ''}
                            )
                          </span>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <button type="button" onClick={() => navigate('catalog')}>
        Close the product
      </button>
    </section>
  );
}

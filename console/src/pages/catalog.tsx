/**
 * Catalog (issue 47): the catalog searched as a storefront searches it (GraphQL
 * `searchProducts`: typo-tolerant text, filters, facets counted by the API and clickable, cursor
 * pages), one product with its variants and prices (`catalogProduct`, each variant's `quote` in
 * the operator's context), and the import of a merchant's ACP feed (catalog-import.tsx). The
 * page holds the state; its parts are in ./catalog/.
 */
import { useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import {
  activeFilters,
  type CatalogSearch,
  EMPTY_CATALOG_SEARCH,
  type FacetPick,
  hasCriteria,
  type QuoteContext,
  SEARCH_PRODUCTS,
  type SearchPage,
  searchVariables,
  toggleFacet,
} from '../catalog-search.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Loading, ProblemView } from '../ui/parts.tsx';
import { Facets } from './catalog/facets.tsx';
import { ProductView } from './catalog/product.tsx';
import { SearchForm } from './catalog/search-form.tsx';
import { SearchSummary } from './catalog/summary.tsx';
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
  return (
    <section aria-labelledby="catalog-h">
      <h1 id="catalog-h">Catalog</h1>
      <SearchForm form={form} onChange={setForm} onSubmit={() => run({ ...form })} />
      <FilterChips search={search} onPick={pick} />
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
          <SearchSummary page={page} query={search?.query} cursors={cursors} onCursors={setCursors} />
        </div>
      ) : null}
      <CatalogImportPanel />
    </section>
  );
}

/** The filters on, each a button that takes it off. */
function FilterChips({ search, onPick }: { search: CatalogSearch | null; onPick: (p: FacetPick) => void }) {
  const chips = search ? activeFilters(search) : [];
  if (chips.length === 0) return null;
  return (
    <ul class="plain chips" aria-label="Filters on">
      {chips.map((c) => (
        <li key={c.label}>
          <button type="button" class="secondary" onClick={() => onPick(c.pick)}>
            Remove {c.label}
          </button>
        </li>
      ))}
    </ul>
  );
}

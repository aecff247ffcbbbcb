/** The catalog's search form (catalog.tsx): words, currency, a price range, availability. */
import type { CatalogSearch } from '../../catalog-search.ts';

export function SearchForm({
  form,
  onChange,
  onSubmit,
}: {
  form: CatalogSearch;
  onChange: (next: CatalogSearch) => void;
  onSubmit: () => void;
}) {
  const text = (name: 'query' | 'currency' | 'minPrice' | 'maxPrice') => ({
    value: form[name],
    onInput: (e: { currentTarget: { value: string } }) =>
      onChange({ ...form, [name]: e.currentTarget.value }),
  });
  return (
    <form
      class="filters"
      aria-label="Search the catalog"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
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
          onChange={(e) => onChange({ ...form, availableOnly: e.currentTarget.checked })}
        />{' '}
        Available now only
      </label>
      <button type="submit">Search</button>
    </form>
  );
}

/** The search's facets (catalog.tsx): counted by the API, each value a filter to toggle. */
import { formatAmount } from '../../amounts.ts';
import { type CatalogSearch, type FacetPick, isPicked, type SearchFacets } from '../../catalog-search.ts';

/** The API's counts over every match; each value a toggle button (pressed: its filter is on). */
export function Facets({
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
        valuesOf(facets.categories, (value) => ({ kind: 'category', value })),
      )}
      {group(
        'Brand',
        valuesOf(facets.brands, (value) => ({ kind: 'brand', value })),
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
          valuesOf(o.values, (value) => ({ kind: 'option', name: o.name, value })),
        ),
      )}
      {group(
        'Condition',
        valuesOf(facets.conditions, (value) => ({ kind: 'condition', value })),
      )}
    </aside>
  );
}

/** A facet's counted values as buttons, each picking its value with `pick`. */
const valuesOf = (list: readonly { value: string; count: number }[], pick: (value: string) => FacetPick) =>
  list.map((f) => ({ label: f.value, count: f.count, pick: pick(f.value) }));

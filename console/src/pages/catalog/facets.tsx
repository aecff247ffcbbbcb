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

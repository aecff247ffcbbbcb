/** The search's page of products as a table, each linking to its product (catalog.tsx). */
import { formatAmount } from '../../amounts.ts';
import { PAGE_SIZE, type SearchPage } from '../../catalog-search.ts';
import { Link } from '../../ui/parts.tsx';

export function Results({ page, cursors }: { page: SearchPage; cursors: (string | null)[] }) {
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

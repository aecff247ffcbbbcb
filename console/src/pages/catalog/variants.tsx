/** A product's variants (product.tsx): stock, base and list prices, and what the caller pays for one unit. */
import { formatAmount } from '../../amounts.ts';
import type { CatalogProduct, QuoteContext } from '../../catalog-search.ts';

const prices = (list: { currency: string; amountDecimal: string }[]) =>
  list.length === 0 ? '—' : list.map((p) => `${formatAmount(p.amountDecimal)} ${p.currency}`).join(', ');

export function VariantsTable({ product: p, context }: { product: CatalogProduct; context: QuoteContext }) {
  return (
    <div class="scroll">
      <table data-testid="variants">
        <caption>
          {p.variants.length} {p.variants.length === 1 ? 'variant' : 'variants'}; the caller pays one unit in{' '}
          {context.currency.toUpperCase()}, region {context.region}
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
  );
}

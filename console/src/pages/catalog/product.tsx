/**
 * One product (catalog.tsx): its details and its variants priced for a caller's context
 * (`catalogProduct`, each variant's `quote`), the context changed in the page.
 */
import { useState } from 'preact/hooks';
import { graphql } from '../../api.ts';
import { CATALOG_PRODUCT, type CatalogProduct, type QuoteContext, quoteInput } from '../../catalog-search.ts';
import { navigate } from '../../router.ts';
import { useAsync } from '../../ui/async.ts';
import { Empty, Loading, ProblemView } from '../../ui/parts.tsx';
import { VariantsTable } from './variants.tsx';

export function ProductView({
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
          <VariantsTable product={p} context={context} />
        </>
      ) : null}
      <button type="button" onClick={() => navigate('catalog')}>
        Close the product
      </button>
    </section>
  );
}

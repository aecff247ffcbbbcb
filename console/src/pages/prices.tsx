/**
 * Prices: POST /v1/prices/calculate for a SKU, region and segment, each modifier explained,
 * the cache state (X-Cache), and what the edge's quote would serve (GET /cart/quote: the
 * line's source, `last_known`/`static` when pricing is degraded).
 */
import { useState } from 'preact/hooks';
import { rest } from '../api.ts';
import { asApiError, useAction } from '../ui/async.ts';
import { Loading, ProblemView, Time } from '../ui/parts.tsx';

interface Price {
  sku: string;
  basePrice: number;
  dynamicPrice: number;
  currency: string;
  appliedModifiers: string[];
  calculatedAt: string;
}
interface QuoteLine {
  sku: string;
  unitPrice: number;
  source: string;
  appliedModifiers: string[];
}
interface Quote {
  lines: QuoteLine[];
  degraded: boolean;
  promotions: { status: string };
}

/** The spec's price rules (section "2. Calculate price"), in the operator's words. */
export const MODIFIERS: Record<string, string> = {
  SCARCITY_SURCHARGE_15: 'Inventory below 10 units: the base price × 1.15.',
  OVERSTOCK_DISCOUNT_10: 'Inventory above 500 units: the base price × 0.90.',
  VIP_SEGMENT_DISCOUNT: 'Customer segment VIP: × 0.95, after the inventory rule.',
};

const SOURCES: Record<string, string> = {
  live: 'priced by the pricing service for this quote',
  cache: 'from the price cache (at most 60 s old)',
  last_known: 'pricing did not answer: the last known price (degraded)',
  static: 'pricing and the last known price unavailable: the static catalog price (degraded)',
};

export function PricesPage() {
  const [form, setForm] = useState({
    sku: 'SKU-ABC-000001',
    currency: 'USD',
    region: 'EU',
    customerSegment: 'VIP',
    inventoryLevel: '5',
  });
  const calc = useAction(async () => {
    const price = await rest<Price>('/v1/prices/calculate', {
      body: { ...form, inventoryLevel: Number(form.inventoryLevel) },
    });
    const q = new URLSearchParams({ line: `${form.sku}:1`, currency: form.currency, region: form.region });
    if (form.customerSegment) q.set('customerSegment', form.customerSegment);
    // The quote is a second view; its refusal (e.g. a SKU outside the spec's shape) is shown, not thrown.
    const quote = await rest<Quote>(`/cart/quote?${q}`).then(
      (r) => ({ ok: true as const, data: r.data }),
      (error: unknown) => ({ ok: false as const, error: asApiError(error) }),
    );
    return { price: price.data, cache: price.headers.get('x-cache') ?? 'unknown', quote };
  });
  const field = (name: keyof typeof form, label: string) => (
    <label>
      {label}{' '}
      <input
        name={name}
        inputMode={name === 'inventoryLevel' ? 'decimal' : 'text'}
        value={form[name]}
        required={name !== 'customerSegment'}
        onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <section aria-labelledby="prices-h">
      <h1 id="prices-h">Prices</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void calc.run();
        }}
      >
        {field('sku', 'SKU')}
        {field('currency', 'Currency')}
        {field('region', 'Region')}
        {field('customerSegment', 'Segment')}
        {field('inventoryLevel', 'Inventory level')}
        <button type="submit">Calculate</button>
      </form>
      {calc.state === 'loading' ? <Loading what="the price" /> : null}
      {calc.state === 'error' ? <ProblemView error={calc.error} /> : null}
      {calc.state === 'ok' ? (
        <div class="panel" data-testid="price">
          <p class="big">
            {calc.data.price.dynamicPrice} {calc.data.price.currency}{' '}
            <span class="muted">
              (base {calc.data.price.basePrice}, calculated <Time at={calc.data.price.calculatedAt} />)
            </span>
          </p>
          <p>
            Cache: <span class="tag">{calc.data.cache}</span>{' '}
            {calc.data.cache === 'HIT' ? 'served unchanged from the 60 s cache' : 'computed now'}
          </p>
          <h2>Applied modifiers</h2>
          {calc.data.price.appliedModifiers.length === 0 ? (
            <p>None: the base price stands (inventory 10–500, segment not VIP).</p>
          ) : (
            <dl>
              {calc.data.price.appliedModifiers.map((m) => (
                <div key={m}>
                  <dt>
                    <code>{m}</code>
                  </dt>
                  <dd>{MODIFIERS[m] ?? 'A modifier this console does not know.'}</dd>
                </div>
              ))}
            </dl>
          )}
          <h2>What the edge's quote serves</h2>
          {calc.data.quote.ok ? (
            <p>
              {calc.data.quote.data.lines[0]?.unitPrice} {form.currency}, source{' '}
              <span class={`tag ${calc.data.quote.data.degraded ? 'bad' : ''}`}>
                {calc.data.quote.data.lines[0]?.source}
              </span>
              : {SOURCES[calc.data.quote.data.lines[0]?.source ?? ''] ?? ''}. Promotions{' '}
              {calc.data.quote.data.promotions.status}.
            </p>
          ) : (
            <ProblemView error={calc.data.quote.error} />
          )}
        </div>
      ) : null}
    </section>
  );
}

/**
 * Promotions: the rules (GraphQL `promotions`), an editor for a draft rule and a preview of a
 * basket with the draft in place, before anything is saved. Validation is the API's own: the
 * preview answers the errors the save would (docs/console.md).
 */
import { useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import { operation } from '../operations.ts';
import { type Preview, previewPromotions } from '../preview.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

interface Promotion {
  promotionId: string;
  name: string;
  priority: number;
  status: string;
  stacking: string;
  couponCodes: string[] | null;
  validFrom: string | null;
  validUntil: string | null;
  updatedAt: string;
  rule: unknown;
}

// Registered operations (schemas/operations/promotions.graphql, upsert-promotion.graphql).
const PROMOTIONS = operation('Promotions');
const UPSERT = operation('UpsertPromotion');

export const TEMPLATE = {
  version: '2.1',
  promotion_id: 'PROMO-DRAFT-1',
  name: '10% off carts with tools, 3 items or more',
  priority: 20,
  status: 'ACTIVE',
  stacking: 'STACKABLE',
  conditions: {
    all: [
      { fact: 'cart.items', operator: 'contains_category', value: 'tools' },
      { fact: 'cart.total_quantity', operator: 'greater_than_inclusive', value: 3 },
    ],
  },
  actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 10 }],
};

export const SAMPLE_BASKET = {
  currency: 'USD',
  customer: { id: 'cust-42', segment: 'VIP' },
  lines: [
    { sku: 'SKU-TOL-000004', quantity: 2, unitPriceDecimal: '19.99', category: 'tools' },
    { sku: 'SKU-ELC-000001', quantity: 2, unitPriceDecimal: '49.50', category: 'electronics' },
  ],
};

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** The editor's text as JSON, or the parse error in words (before anything is sent). */
export function parseJson(
  label: string,
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return {
      ok: false,
      message: `${label} is not JSON: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

export function PromotionsPage() {
  const list = useAsync(() => graphql<{ promotions: Promotion[] }>(PROMOTIONS).then((d) => d.promotions), []);
  const [rule, setRule] = useState(pretty(TEMPLATE));
  const [basket, setBasket] = useState(pretty(SAMPLE_BASKET));
  const [local, setLocal] = useState<string | null>(null);
  const preview = useAction((r: unknown, b: unknown) => previewPromotions(b, r));
  const save = useAction((r: unknown) =>
    graphql<{ upsertPromotion: { revision: number } }>(UPSERT, { rule: r }),
  );

  const parsed = () => {
    const r = parseJson('The rule', rule);
    const b = parseJson('The basket', basket);
    const bad = [r, b].find((x) => !x.ok);
    setLocal(bad && !bad.ok ? bad.message : null);
    return r.ok && b.ok ? { rule: r.value, basket: b.value } : null;
  };

  return (
    <section aria-labelledby="promotions-h">
      <h1 id="promotions-h">Promotions</h1>
      <h2>Rules</h2>
      {list.state === 'loading' ? <Loading what="promotions" /> : null}
      {list.state === 'error' ? <ProblemView error={list.error} /> : null}
      {list.state === 'ok' && list.data.length === 0 ? <Empty>No promotion rule is stored.</Empty> : null}
      {list.state === 'ok' && list.data.length > 0 ? (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Priority</th>
                <th scope="col">Rule</th>
                <th scope="col">Stacking</th>
                <th scope="col">Status</th>
                <th scope="col">Window</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Edit</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {[...list.data]
                .sort((a, b) => b.priority - a.priority || a.promotionId.localeCompare(b.promotionId))
                .map((p) => (
                  <tr key={p.promotionId}>
                    <td class="num">{p.priority}</td>
                    <td>
                      <strong>{p.name}</strong>
                      <br />
                      <code>{p.promotionId}</code>
                      {p.couponCodes?.length ? (
                        <span class="muted"> coupons {p.couponCodes.join(', ')}</span>
                      ) : null}
                    </td>
                    <td>{p.stacking}</td>
                    <td>
                      <span class={`tag ${p.status === 'ACTIVE' ? 'good' : ''}`}>{p.status}</span>
                    </td>
                    <td>
                      {p.validFrom || p.validUntil ? (
                        <>
                          <Time at={p.validFrom} /> – <Time at={p.validUntil} />
                        </>
                      ) : (
                        'always'
                      )}
                    </td>
                    <td>
                      <Time at={p.updatedAt} />
                    </td>
                    <td>
                      <button type="button" onClick={() => setRule(pretty(p.rule))}>
                        Edit {p.promotionId}
                      </button>
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      ) : null}

      <h2>Editor and preview</h2>
      <p class="note">
        The preview evaluates the basket against the active rules with this draft added (or in place of the
        rule with its id). Nothing is saved until you press Save; both are checked by the API.
      </p>
      <div class="editor">
        <label>
          Draft rule (format 2.1)
          <textarea
            rows={18}
            spellcheck={false}
            value={rule}
            onInput={(e) => setRule(e.currentTarget.value)}
          />
        </label>
        <label>
          Basket
          <textarea
            rows={18}
            spellcheck={false}
            value={basket}
            onInput={(e) => setBasket(e.currentTarget.value)}
          />
        </label>
      </div>
      <div class="toolbar">
        <button
          type="button"
          onClick={() => {
            const p = parsed();
            if (p) void preview.run(p.rule, p.basket);
          }}
        >
          Preview
        </button>
        <button
          type="button"
          onClick={() => {
            const p = parsed();
            if (p) void save.run(p.rule).then((r) => r && list.reload());
          }}
        >
          Save rule
        </button>
      </div>
      {local ? (
        <p class="problem" role="alert">
          {local}
        </p>
      ) : null}
      {save.state === 'error' ? <ProblemView error={save.error} /> : null}
      {save.state === 'ok' ? (
        <p role="status" class="ok">
          Saved, revision {save.data.upsertPromotion.revision}.
        </p>
      ) : null}
      {preview.state === 'loading' ? <Loading what="the preview" /> : null}
      {preview.state === 'error' ? <ProblemView error={preview.error} /> : null}
      {preview.state === 'ok' ? <PreviewView preview={preview.data} /> : null}
    </section>
  );
}

function PreviewView({ preview }: { preview: Preview }) {
  const draft = preview.drafts[0];
  if (!preview.valid || !preview.evaluation)
    return (
      <div class="problem" role="alert" data-testid="preview">
        <strong>The API refuses this rule</strong>
        <ul>
          {(draft?.errors ?? []).map((e) => (
            <li key={e.pointer + e.message}>
              <code>{e.pointer || '/'}</code> {e.message}
            </li>
          ))}
        </ul>
      </div>
    );
  const ev = preview.evaluation;
  return (
    <div class="panel" data-testid="preview">
      <p>
        Draft <code>{draft?.promotionId}</code> is valid
        {draft?.replacesStored ? ' and replaces the stored rule of that id in this preview' : ''}.
      </p>
      <p class="big">
        Subtotal {ev.subtotalDecimal}, discounts {ev.discountTotalDecimal}, total {ev.totalDecimal}{' '}
        {ev.currency}
      </p>
      <h3>Applied</h3>
      {ev.applied.length === 0 ? <Empty>No rule applied.</Empty> : null}
      <ul>
        {ev.applied.map((a) => (
          <li key={a.promotionId}>
            <code>{a.promotionId}</code> {a.name} (priority {a.priority}): −{a.amountDecimal}
          </li>
        ))}
      </ul>
      <h3>Not applied, and why</h3>
      {ev.notApplied.length === 0 ? <Empty>Every active rule applied.</Empty> : null}
      <ul>
        {ev.notApplied.map((n) => (
          <li key={n.promotionId}>
            <code>{n.promotionId}</code> <span class="tag">{n.reason}</span> {n.detail}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Orders and audit: orders searched through GraphQL `purchaseOrders` (orders:read; the persisted
 * PurchaseOrderSearch, filters and cursor pages on the API's side), a checkout order's priced
 * lines and total under its row; an order's audit entries and the chain's verification from the
 * operator API (audit:read), and what proves it was authorized (./order-authorization.tsx).
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { formatAmount } from '../amounts.ts';
import { graphql, rest } from '../api.ts';
import { lineCount, type PricedLine, pricedLines } from '../order-lines.ts';
import {
  EMPTY_SEARCH,
  type Order,
  PAGE_SIZE,
  SEARCH,
  type SearchForm,
  searchVariables,
} from '../orders-search.ts';
import { navigate } from '../router.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Link, Loading, ProblemView, Time } from '../ui/parts.tsx';
import { OrderAuthorization } from './order-authorization.tsx';

export function OrdersPage({ params }: { params: URLSearchParams }) {
  const orderId = params.get('order');
  const [form, setForm] = useState<SearchForm>({ ...EMPTY_SEARCH, agentId: params.get('agent') ?? '' });
  // The submitted search, and the cursors of the pages before this one (Previous pops one).
  const [search, setSearch] = useState(form);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors[cursors.length - 1] ?? null;
  const orders = useAsync(
    () =>
      graphql<{ purchaseOrders: Order[] }>(SEARCH, searchVariables(search, after)).then(
        (d) => d.purchaseOrders,
      ),
    [search, after],
  );
  const shown = orders.state === 'ok' ? orders.data : [];
  const field = (name: keyof SearchForm) => ({
    value: form[name],
    onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [name]: e.currentTarget.value }),
  });
  const last = shown[shown.length - 1];
  return (
    <section aria-labelledby="orders-h">
      <h1 id="orders-h">Orders and audit</h1>
      <AuditVerification />
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch({ ...form });
          setCursors([null]);
        }}
      >
        <label>
          Agent ID <input {...field('agentId')} />
        </label>
        <label>
          SPIFFE ID <input {...field('spiffeId')} />
        </label>
        <label>
          SKU <input {...field('sku')} />
        </label>
        <label>
          Status{' '}
          <select
            value={form.status}
            onChange={(e) => setForm({ ...form, status: e.currentTarget.value as SearchForm['status'] })}
          >
            <option value="">any</option>
            <option value="APPROVED">APPROVED</option>
            <option value="CANCELLED">CANCELLED</option>
          </select>
        </label>
        <label>
          From <input type="datetime-local" {...field('from')} />
        </label>
        <label>
          Before <input type="datetime-local" {...field('before')} />
        </label>
        <button type="submit">Search</button>
      </form>
      {orderId ? <AuditTrail orderId={orderId} /> : null}
      {orderId ? <OrderAuthorization orderId={orderId} /> : null}
      {orders.state === 'error' ? <ProblemView error={orders.error} /> : null}
      {orders.state === 'loading' ? <Loading what="orders" /> : null}
      {orders.state === 'ok' && shown.length === 0 ? <Empty>No order matches.</Empty> : null}
      {shown.length > 0 ? (
        <div class="scroll">
          <table data-testid="orders">
            <caption>
              Orders {(cursors.length - 1) * PAGE_SIZE + 1}–{(cursors.length - 1) * PAGE_SIZE + shown.length},
              newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Status</th>
                <th scope="col">Agent</th>
                <th scope="col">SKU</th>
                <th scope="col">Qty</th>
                <th scope="col">Budget or total (USD)</th>
                <th scope="col">Processed</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((o) => {
                const lines = pricedLines(o);
                return (
                  <Fragment key={o.orderId}>
                    <tr aria-current={o.orderId === orderId ? 'true' : undefined}>
                      <td>
                        <Link to={`orders?order=${encodeURIComponent(o.orderId)}`}>{o.orderId}</Link>
                      </td>
                      <td>{o.status}</td>
                      <td>{o.agentId}</td>
                      <td>{lines ? lineCount(lines.length) : o.sku}</td>
                      <td class="num">{o.quantity}</td>
                      <td class="num">
                        {lines && o.totalDecimal ? (
                          <span title="the checkout's total">{formatAmount(o.totalDecimal)}</span>
                        ) : (
                          o.allocatedBudgetDecimal
                        )}
                      </td>
                      <td>
                        <Time at={o.processedAt} />
                      </td>
                    </tr>
                    {lines ? (
                      <tr class="sub-row" data-testid="order-lines">
                        <td colSpan={7}>
                          <OrderLines order={o} lines={lines} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="toolbar">
        {cursors.length > 1 ? (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {/* A full page may have a next one; the API says so only by answering it. */}
        {shown.length === PAGE_SIZE && last ? (
          <button type="button" onClick={() => setCursors([...cursors, last.cursor])}>
            Next page
          </button>
        ) : null}
      </div>
    </section>
  );
}

/** A checkout order's priced lines under its row: what was bought, at what price, and the total. */
function OrderLines({ order, lines }: { order: Order; lines: PricedLine[] }) {
  return (
    <table class="lines">
      <caption>
        Lines of <code>{order.orderId}</code>
        {order.checkoutSessionId ? (
          <>
            {' '}
            (checkout <code>{order.checkoutSessionId}</code>)
          </>
        ) : null}
      </caption>
      <thead>
        <tr>
          <th scope="col">SKU</th>
          <th scope="col">Qty</th>
          <th scope="col">Unit price</th>
          <th scope="col">Discount</th>
          <th scope="col">Line total</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((l, i) => (
          <tr key={i}>
            <td>{l.sku}</td>
            <td class="num">{l.quantity}</td>
            <td class="num">{formatAmount(l.unitPriceDecimal)}</td>
            <td class="num">{formatAmount(l.discountDecimal)}</td>
            <td class="num">{formatAmount(l.lineTotalDecimal)}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={4}>
            Total (USD)
          </th>
          <td class="num">{formatAmount(order.totalDecimal ?? '')}</td>
        </tr>
      </tfoot>
    </table>
  );
}

/** An entry of GET /api/v2/operator/audit (schemas/openapi/operator.yaml, `AuditEntry`). */
interface AuditEntry {
  seq: number;
  at: string;
  trace_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  spiffe_id: string | null;
  reason: string;
  order_id: string | null;
  hash: string;
}

function AuditTrail({ orderId }: { orderId: string }) {
  const trail = useAsync(
    () =>
      rest<{ entries: AuditEntry[] }>(
        `/api/v2/operator/audit?${new URLSearchParams({ order_id: orderId, limit: '50' })}`,
      ).then((r) => r.data.entries),
    [orderId],
  );
  return (
    <section class="panel" aria-labelledby="trail-h" data-testid="audit-trail">
      <h2 id="trail-h">
        Audit trail of <code>{orderId}</code>
      </h2>
      {trail.state === 'loading' ? <Loading what="the audit trail" /> : null}
      {trail.state === 'error' ? <ProblemView error={trail.error} /> : null}
      {trail.state === 'ok' && trail.data.length === 0 ? (
        <Empty>No audit entry names this order.</Empty>
      ) : null}
      {trail.state === 'ok' && trail.data.length > 0 ? (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">At</th>
                <th scope="col">Call</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Agent</th>
                <th scope="col">Trace</th>
              </tr>
            </thead>
            <tbody>
              {trail.data.map((e) => (
                <tr key={e.seq}>
                  <td class="num">{e.seq}</td>
                  <td>
                    <Time at={e.at} />
                  </td>
                  <td>
                    <code>
                      {e.method} {e.path}
                    </code>
                  </td>
                  <td class="num">{e.status}</td>
                  <td>{e.reason}</td>
                  <td>
                    <code>{e.spiffe_id ?? '—'}</code>
                  </td>
                  <td>
                    <code title={`link hash ${e.hash}`}>{e.trace_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <button type="button" onClick={() => navigate('orders')}>
        Close the audit trail
      </button>
    </section>
  );
}

/** GET /api/v2/operator/audit/verify (`AuditVerification`). */
interface Verification {
  ok: boolean;
  entries: number | null;
  anchored_up_to: number | null;
  unanchored: number | null;
  first_broken: { seq: number; kind: string; problem: string } | null;
  checked_at: string;
}

function AuditVerification() {
  const verify = useAsync(() => rest<Verification>('/api/v2/operator/audit/verify').then((r) => r.data), []);
  return (
    <div
      class={`panel ${verify.state === 'ok' ? (verify.data.ok ? 'good' : 'bad') : ''}`}
      data-testid="audit-verify"
    >
      <h2>Audit chain</h2>
      {verify.state === 'loading' ? <Loading what="the chain's verification" /> : null}
      {verify.state === 'error' ? <ProblemView error={verify.error} /> : null}
      {verify.state === 'ok' ? (
        <>
          <p role="status">
            {verify.data.ok ? 'The chain verifies' : 'The chain does not verify'}
            {verify.data.entries !== null
              ? ` (${verify.data.entries} entries; ${anchoring(verify.data)})`
              : ''}
            , checked <Time at={verify.data.checked_at} />.
          </p>
          {verify.data.first_broken ? (
            <p>
              First broken link: entry #{verify.data.first_broken.seq} ({verify.data.first_broken.kind}):{' '}
              {verify.data.first_broken.problem}
            </p>
          ) : null}
        </>
      ) : null}
      <button type="button" onClick={verify.reload}>
        Verify again
      </button>
    </div>
  );
}

function anchoring(v: Verification): string {
  if (!v.anchored_up_to) return 'no signed checkpoint yet';
  return `signed checkpoints up to #${v.anchored_up_to}${v.unanchored ? `, ${v.unanchored} after the last` : ''}`;
}

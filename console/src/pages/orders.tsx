/**
 * Orders and audit: orders from GraphQL `purchaseOrders` (orders:read); an order's audit
 * entries and the chain's verification from the operator API (audit:read).
 */
import { useState } from 'preact/hooks';
import { graphql, rest } from '../api.ts';
import { filterOrders, type Order } from '../orders-filter.ts';
import { navigate } from '../router.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Link, Loading, ProblemView, Time } from '../ui/parts.tsx';

const ORDERS = `query ConsoleOrders($agentId: String, $limit: Int) {
  purchaseOrders(agentId: $agentId, limit: $limit) {
    orderId status agentId spiffeId sku quantity allocatedBudget processedAt
  }
}`;

export function OrdersPage({ params }: { params: URLSearchParams }) {
  const orderId = params.get('order');
  const [agentId, setAgentId] = useState(params.get('agent') ?? '');
  const [filter, setFilter] = useState({ sku: '', since: '', until: '' });
  const [query, setQuery] = useState(agentId);
  const orders = useAsync(
    () =>
      graphql<{ purchaseOrders: Order[] }>(ORDERS, { agentId: query || null, limit: 200 }).then(
        (d) => d.purchaseOrders,
      ),
    [query],
  );
  const shown = orders.state === 'ok' ? filterOrders(orders.data, filter) : [];
  return (
    <section aria-labelledby="orders-h">
      <h1 id="orders-h">Orders and audit</h1>
      <AuditVerification />
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(agentId.trim());
        }}
      >
        <label>
          Agent ID <input value={agentId} onInput={(e) => setAgentId(e.currentTarget.value)} />
        </label>
        <label>
          SKU{' '}
          <input value={filter.sku} onInput={(e) => setFilter({ ...filter, sku: e.currentTarget.value })} />
        </label>
        <label>
          From{' '}
          <input
            type="datetime-local"
            value={filter.since}
            onInput={(e) => setFilter({ ...filter, since: e.currentTarget.value })}
          />
        </label>
        <label>
          To{' '}
          <input
            type="datetime-local"
            value={filter.until}
            onInput={(e) => setFilter({ ...filter, until: e.currentTarget.value })}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      {orderId ? <AuditTrail orderId={orderId} /> : null}
      {orders.state === 'error' ? <ProblemView error={orders.error} /> : null}
      {orders.state === 'loading' ? <Loading what="orders" /> : null}
      {orders.state === 'ok' && shown.length === 0 ? <Empty>No order matches.</Empty> : null}
      {shown.length > 0 ? (
        <div class="scroll">
          <table>
            <caption>
              {shown.length} of the newest {orders.state === 'ok' ? orders.data.length : 0} orders
            </caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Status</th>
                <th scope="col">Agent</th>
                <th scope="col">SKU</th>
                <th scope="col">Qty</th>
                <th scope="col">Budget (USD)</th>
                <th scope="col">Processed</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((o) => (
                <tr key={o.orderId} aria-current={o.orderId === orderId ? 'true' : undefined}>
                  <td>
                    <Link to={`orders?order=${encodeURIComponent(o.orderId)}`}>{o.orderId}</Link>
                  </td>
                  <td>{o.status}</td>
                  <td>{o.agentId}</td>
                  <td>{o.sku}</td>
                  <td class="num">{o.quantity}</td>
                  <td class="num">{String(o.allocatedBudget)}</td>
                  <td>
                    <Time at={o.processedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
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

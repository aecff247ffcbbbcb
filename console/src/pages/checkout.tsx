/**
 * Checkout: the ACP checkout sessions agent platforms build before they buy (GraphQL
 * `checkoutSessions`, orders:read; the persisted CheckoutSessions), most recently changed first,
 * open ones by default, with their priced lines, total, owner and times. A completed session
 * links to the order it placed. Below them, the carts (./carts.tsx).
 */
import { useState } from 'preact/hooks';
import { formatAmount } from '../amounts.ts';
import { graphql } from '../api.ts';
import {
  type CheckoutSession,
  DEFAULT_FILTER,
  FINAL,
  SESSIONS_PAGE,
  STATUS_FILTERS,
  sessionVariables,
  statusWords,
} from '../checkout-sessions.ts';
import { operation } from '../operations.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Link, Loading, ProblemView, Time } from '../ui/parts.tsx';
import { CartsSection } from './carts.tsx';

// Registered operation (schemas/operations/checkout-sessions.graphql).
const SESSIONS = operation('CheckoutSessions');

export function CheckoutPage() {
  const [filter, setFilter] = useState(DEFAULT_FILTER);
  const sessions = useAsync(
    () =>
      graphql<{ checkoutSessions: CheckoutSession[] }>(SESSIONS, sessionVariables(filter)).then(
        (d) => d.checkoutSessions,
      ),
    [filter],
  );
  const shown = sessions.data ?? [];
  return (
    <section aria-labelledby="checkout-h">
      <h1 id="checkout-h">Checkout</h1>
      <p class="note">
        Checkout sessions of agent platforms (ACP and UCP): priced baskets an agent completes as one purchase
        order. An open session past its expiry is shown as expired.
      </p>
      <div class="filters">
        <label>
          Status
          <select value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
            {STATUS_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => sessions.reload()}>
          Refresh
        </button>
      </div>
      {sessions.state === 'loading' && !sessions.data ? <Loading what="checkout sessions" /> : null}
      {sessions.state === 'error' ? <ProblemView error={sessions.error} /> : null}
      {sessions.state === 'ok' && shown.length === 0 ? (
        <Empty>No checkout session has this status.</Empty>
      ) : null}
      {shown.length > 0 ? (
        <div class="scroll">
          <table data-testid="checkout-sessions">
            <caption>
              {shown.length} {shown.length === 1 ? 'session' : 'sessions'}, most recently changed first
              {shown.length === SESSIONS_PAGE ? ` (the first ${SESSIONS_PAGE})` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Status</th>
                <th scope="col">Lines</th>
                <th scope="col">Total</th>
                <th scope="col">Owner</th>
                <th scope="col">Created, expires</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={s.id}>
                  <td>
                    <code class="break">{s.id}</code>
                    {s.orderId ? (
                      <>
                        <br />
                        order <Link to={`orders?order=${encodeURIComponent(s.orderId)}`}>{s.orderId}</Link>
                      </>
                    ) : null}
                  </td>
                  <td>
                    <span
                      class={`tag nowrap ${s.status === 'COMPLETED' ? 'good' : s.status === 'CANCELED' || s.status === 'EXPIRED' ? 'bad' : ''}`}
                    >
                      {statusWords(s.status)}
                    </span>
                  </td>
                  <td>
                    {s.lines.length === 0 ? (
                      <span class="muted">none priced</span>
                    ) : (
                      <ul class="plain">
                        {s.lines.map((l, i) => (
                          <li key={i} class="nowrap" title={l.name}>
                            {l.quantity} × {l.sku} at {formatAmount(l.unitPriceDecimal)}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td class="num nowrap">
                    {formatAmount(s.totalDecimal)} {s.currency}
                    {/[1-9]/.test(s.discountDecimal) ? (
                      <>
                        <br />
                        <span class="muted">discount {formatAmount(s.discountDecimal)}</span>
                      </>
                    ) : null}
                  </td>
                  <td>
                    <code class="break">{s.owner}</code>
                    <br />
                    <span class="muted">
                      {s.agentId}
                      {s.keyId ? `, key ${s.keyId}` : ''}
                    </span>
                  </td>
                  <td>
                    <Time at={s.createdAt} />
                    <br />
                    {FINAL.has(s.status) && s.status !== 'EXPIRED' ? (
                      <span class="muted">{statusWords(s.status)}</span>
                    ) : (
                      <span class={s.status === 'EXPIRED' ? 'muted' : ''}>
                        {s.status === 'EXPIRED' ? 'expired ' : 'expires '}
                        <Time at={s.expiresAt} />
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <CartsSection />
    </section>
  );
}

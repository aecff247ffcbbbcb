/**
 * The Checkout page's carts: baskets agent platforms build before they buy (UCP's cart
 * capability, ACP's Cart API; GraphQL `carts`, orders:read; the persisted Carts), not expired,
 * most recently changed first, with their estimated lines and total, what could not be priced,
 * and the checkout session made from them (docs/carts.md).
 */
import { formatAmount } from '../amounts.ts';
import { graphql } from '../api.ts';
import { CARTS_PAGE, type Cart } from '../checkout-sessions.ts';
import { operation } from '../operations.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

// Registered operation (schemas/operations/carts.graphql).
const CARTS = operation('Carts');

export function CartsSection() {
  const carts = useAsync(
    () => graphql<{ carts: Cart[] }>(CARTS, { first: CARTS_PAGE }).then((d) => d.carts),
    [],
  );
  const shown = carts.data ?? [];
  return (
    <section aria-labelledby="carts-h">
      <h2 id="carts-h">Carts</h2>
      <p class="note">
        Carts of agent platforms (UCP and ACP): estimated prices, nothing reserved or charged. A canceled or
        expired cart is gone; a cart turned into a checkout names its session.
      </p>
      <div class="filters">
        <button type="button" onClick={() => carts.reload()}>
          Refresh carts
        </button>
      </div>
      {carts.state === 'loading' && !carts.data ? <Loading what="carts" /> : null}
      {carts.state === 'error' ? <ProblemView error={carts.error} /> : null}
      {carts.state === 'ok' && shown.length === 0 ? <Empty>No cart.</Empty> : null}
      {shown.length > 0 ? (
        <div class="scroll">
          <table data-testid="carts">
            <caption>
              {shown.length} {shown.length === 1 ? 'cart' : 'carts'}, most recently changed first
              {shown.length === CARTS_PAGE ? ` (the first ${CARTS_PAGE})` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Cart</th>
                <th scope="col">Lines</th>
                <th scope="col">Estimated total</th>
                <th scope="col">Owner</th>
                <th scope="col">Changed, expires</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((c) => (
                <tr key={c.id}>
                  <td>
                    <code class="break">{c.id}</code>
                    <br />
                    <span class="muted">{c.protocol.toUpperCase()}</span>
                    {c.checkoutSessionId ? (
                      <>
                        <br />
                        checkout <code class="break">{c.checkoutSessionId}</code>
                      </>
                    ) : null}
                  </td>
                  <td>
                    {c.lines.length === 0 ? (
                      <span class="muted">none priced</span>
                    ) : (
                      <ul class="plain">
                        {c.lines.map((l, i) => (
                          <li key={i} class="nowrap" title={l.name}>
                            {l.quantity} × {l.sku} at {formatAmount(l.unitPriceDecimal)}
                          </li>
                        ))}
                      </ul>
                    )}
                    {c.problems.length > 0 ? (
                      <ul class="plain muted">
                        {c.problems.map((p, i) => (
                          <li key={`p${i}`}>{p}</li>
                        ))}
                      </ul>
                    ) : null}
                  </td>
                  <td class="num nowrap">
                    {formatAmount(c.totalDecimal)} {c.currency}
                    {/[1-9]/.test(c.discountDecimal) ? (
                      <>
                        <br />
                        <span class="muted">discount {formatAmount(c.discountDecimal)}</span>
                      </>
                    ) : null}
                  </td>
                  <td>
                    <code class="break">{c.owner}</code>
                    <br />
                    <span class="muted">
                      {c.agentId}
                      {c.keyId ? `, key ${c.keyId}` : ''}
                    </span>
                  </td>
                  <td>
                    <Time at={c.updatedAt} />
                    <br />
                    <span>
                      expires <Time at={c.expiresAt} />
                    </span>
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

/**
 * Approvals (issue 22): orders waiting for a person, oldest first (GraphQL `pendingApprovals`,
 * orders:approve), each with its agent, its spend against the policy and the product's catalog
 * price (and, when quantity × that price is above the budget, a plain sentence saying so), or a
 * checkout order's priced lines and total; approve (an optional note) or reject (a reason is
 * required); and the newest decisions (`purchaseOrders` by status, orders:read). Whether a decision is allowed, and which one won a
 * race, is the API's answer, shown as it came (docs/console.md). A link with `?order=<id>` (a UCP
 * checkout's continue_url) marks that order's card and says where the order stands.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatAmount } from '../amounts.ts';
import { graphql } from '../api.ts';
import {
  catalogShortfall,
  type Decision,
  linkedOrder,
  linkedOrderSentence,
  newestDecisions,
  type Pending,
  shortfallSentence,
  unitPrice,
} from '../approvals.ts';
import { operation } from '../operations.ts';
import { lineCount, lineSentence, type PricedLine, pricedLines } from '../order-lines.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { Empty, Field, Loading, ProblemView, Time } from '../ui/parts.tsx';

// Registered operations (schemas/operations/pending-approvals.graphql, approval-decisions.graphql,
// approve-purchase-order.graphql, reject-purchase-order.graphql, purchase-order.graphql).
const QUEUE = operation('PendingApprovals');
const DECISIONS = operation('ApprovalDecisions');
const APPROVE = operation('ApprovePurchaseOrder');
const REJECT = operation('RejectPurchaseOrder');
const ORDER = operation('PurchaseOrder');

interface Decided {
  orderId: string;
  status: string;
  approvalsRequired: number;
  approvals: { operator: string }[];
}

export function ApprovalsPage({ params }: { params: URLSearchParams }) {
  const wanted = params.get('order')?.trim() || null;
  const queue = useAsync(
    () =>
      graphql<{ pendingApprovals: { nodes: Pending[] } }>(QUEUE, { first: 100 }).then(
        (d) => d.pendingApprovals.nodes,
      ),
    [],
  );
  const decisions = useAsync(
    () =>
      graphql<Record<'approved' | 'rejected' | 'expired', Decision[]>>(DECISIONS, { limit: 50 }).then((d) =>
        newestDecisions(d, 20),
      ),
    [],
  );
  const waiting = wanted !== null && queue.data?.some((p) => p.order.orderId === wanted);
  // Not in the queue (decided, or unknown): the order's own status says which.
  const looked = useAsync(
    () =>
      wanted === null || waiting !== false
        ? Promise.resolve(undefined)
        : graphql<{ purchaseOrder: { status: string } | null }>(ORDER, { orderId: wanted }).then(
            (d) => d.purchaseOrder,
          ),
    [wanted, waiting],
  );
  const linked = wanted === null ? undefined : linkedOrder(wanted, queue.data ?? [], looked.data);
  const [done, setDone] = useState<Decided | null>(null);
  const decided = (d: Decided) => {
    setDone(d);
    queue.reload();
    decisions.reload();
  };

  return (
    <section aria-labelledby="approvals-h">
      <h1 id="approvals-h">Approvals</h1>
      <p class="note">
        Orders above their spend policy's approval threshold wait here, their amount reserved in the budget. A
        rejection, an expiry or the agent's cancel gives it back.
      </p>
      {wanted !== null && linked ? (
        <p role="status" class={linked.kind === 'waiting' ? 'note' : 'ok'} data-testid="linked-order">
          {linkedOrderSentence(wanted, linked)}
        </p>
      ) : null}
      {wanted !== null && looked.state === 'error' ? <ProblemView error={looked.error} /> : null}
      {done ? (
        <p role="status" class="ok">
          {done.orderId}: {done.status}
          {done.status === 'PENDING_APPROVAL'
            ? `, ${done.approvals.length} of ${done.approvalsRequired} approvals`
            : ''}
          .
        </p>
      ) : null}

      <h2>Waiting for approval</h2>
      {queue.state === 'loading' && !queue.data ? <Loading what="the approval queue" /> : null}
      {queue.state === 'error' ? <ProblemView error={queue.error} /> : null}
      {queue.state === 'ok' && queue.data.length === 0 ? <Empty>No order waits for approval.</Empty> : null}
      {queue.data?.length ? (
        <ul class="cards" data-testid="approval-queue">
          {queue.data.map((p) => (
            <PendingCard
              key={p.order.orderId}
              pending={p}
              onDecided={decided}
              linked={p.order.orderId === wanted}
            />
          ))}
        </ul>
      ) : null}

      <h2>Newest decisions</h2>
      {decisions.state === 'loading' && !decisions.data ? <Loading what="decisions" /> : null}
      {decisions.state === 'error' ? <ProblemView error={decisions.error} /> : null}
      {decisions.state === 'ok' && decisions.data.length === 0 ? <Empty>No decision yet.</Empty> : null}
      {decisions.data?.length ? (
        <div class="scroll">
          <table data-testid="decisions">
            <thead>
              <tr>
                <th scope="col">Decided</th>
                <th scope="col">Order</th>
                <th scope="col">Decision</th>
                <th scope="col">By</th>
                <th scope="col">Reason or note</th>
              </tr>
            </thead>
            <tbody>
              {decisions.data.map((d) => (
                <tr key={d.orderId}>
                  <td>
                    <Time at={d.decidedAt} />
                  </td>
                  <td>
                    <code>{d.orderId}</code>
                    <br />
                    <span class="muted">
                      {d.agentId}, {d.quantity} × {d.sku}, {d.allocatedBudgetDecimal} USD
                    </span>
                  </td>
                  <td>
                    <span class={`tag ${d.status === 'APPROVED' ? 'good' : 'bad'}`}>{d.status}</span>
                  </td>
                  <td>
                    {d.approvals.length > 1 ? d.approvals.map((a) => a.operator).join(', ') : d.decidedBy}
                  </td>
                  <td>{d.decisionReason ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function PendingCard({
  pending: p,
  onDecided,
  linked,
}: {
  pending: Pending;
  onDecided: (d: Decided) => void;
  /** The order the page's link names: marked and scrolled into view. */
  linked: boolean;
}) {
  const id = p.order.orderId;
  const card = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (linked) card.current?.scrollIntoView({ block: 'center' });
  }, [linked]);
  const [text, setText] = useState('');
  const decide = useAction(async (kind: 'approve' | 'reject') => {
    const d =
      kind === 'approve'
        ? (await graphql<{ approvePurchaseOrder: Decided }>(APPROVE, { orderId: id, note: text || null }))
            .approvePurchaseOrder
        : (await graphql<{ rejectPurchaseOrder: Decided }>(REJECT, { orderId: id, reason: text }))
            .rejectPurchaseOrder;
    onDecided(d);
    return d;
  });
  // The API's refusal of the text (BAD_USER_INPUT naming note or reason) is shown on the field.
  const refused =
    decide.state === 'error'
      ? decide.error.fieldErrors.find((e) => e.pointer === '/note' || e.pointer === '/reason')
      : undefined;
  const price = unitPrice(p);
  // A checkout order is priced line by line; a /v2 order has a budget beside the catalog price.
  const lines = pricedLines(p.order);
  const shortfall = lines ? undefined : catalogShortfall(p);
  const busy = decide.state === 'loading';
  return (
    <li
      ref={card}
      class={linked ? 'card linked' : 'card'}
      data-testid="pending-approval"
      {...(linked ? { 'aria-current': 'true' } : {})}
    >
      <p>
        <code>{id}</code>{' '}
        <span class="tag">
          {p.approvals.length} of {p.approvalsRequired} approvals
        </span>
      </p>
      <dl>
        <div>
          <dt>Agent</dt>
          <dd>
            {p.agentId}
            <br />
            <code>{p.spiffeId}</code>
          </dd>
        </div>
        <div>
          <dt>Order</dt>
          {lines ? (
            <CheckoutOrder pending={p} lines={lines} />
          ) : (
            <dd>
              {p.order.quantity} × {p.order.product?.name ?? p.order.sku} (<code>{p.order.sku}</code>)
              {price ? (
                <>
                  {' '}
                  at {price.amountDecimal} {price.currency} each (catalog)
                </>
              ) : null}
              , budget <strong>{p.amount} USD</strong>
              {shortfall ? (
                <p class="shortfall" data-testid="budget-shortfall">
                  {shortfallSentence(shortfall)}
                </p>
              ) : null}
            </dd>
          )}
        </div>
        <div>
          <dt>Spend policy</dt>
          <dd>
            {p.policy ? (
              <>
                <code>{p.policy.subject}</code>: {p.remainingBudget} of {p.policy.budget} USD left this{' '}
                {p.policy.period === 'DAY' ? 'day' : 'month'} (this order counted); approval above{' '}
                {p.policy.approvalAbove ?? '—'}
                {p.policy.secondApprovalAbove ? `, two approvers above ${p.policy.secondApprovalAbove}` : ''}
              </>
            ) : (
              'none applies any more'
            )}
          </dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>
            <Time at={p.expiresAt} />
          </dd>
        </div>
        {p.approvals.length ? (
          <div>
            <dt>Approved by</dt>
            <dd>{p.approvals.map((a) => `${a.operator}${a.note ? ` (${a.note})` : ''}`).join(', ')}</dd>
          </div>
        ) : null}
      </dl>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void decide.run('approve');
        }}
      >
        <Field
          id={`decision-${id}`}
          label={`Reason or note for ${id}`}
          value={text}
          error={refused?.message}
          onInput={setText}
        />
        <button type="submit" disabled={busy}>
          Approve {id}
        </button>
        <button type="button" disabled={busy} onClick={() => void decide.run('reject')}>
          Reject {id}
        </button>
      </form>
      {decide.state === 'error' ? <ProblemView error={decide.error} /> : null}
    </li>
  );
}

/** A checkout order on its card: the priced total and each line, as the checkout priced it. */
function CheckoutOrder({ pending: p, lines }: { pending: Pending; lines: PricedLine[] }) {
  return (
    <dd data-testid="checkout-order">
      Checkout order, {lineCount(lines.length)}, total{' '}
      <strong>{formatAmount(p.order.totalDecimal ?? '')} USD</strong>
      {p.order.checkoutSessionId ? (
        <>
          {' '}
          (session <code>{p.order.checkoutSessionId}</code>)
        </>
      ) : null}
      <ul class="order-lines">
        {lines.map((l, i) => (
          <li key={i}>{lineSentence(l)}</li>
        ))}
      </ul>
    </dd>
  );
}

/**
 * What proves an order was authorized (issue 50, docs/ap2.md), under its audit trail on the
 * Orders page: the operators' approval decision signed by this system (approved or rejected, when,
 * under which policy, thresholds and amount) and the AP2 checkout mandate the order's checkout was completed
 * with (which platform key signed it, which of our keys signed the checkout inside it). Read
 * through the registered OrderAuthorization operation (orders:read); the signed texts are shown
 * as they are kept: the ones `npm run audit:prove-verify` checks offline, from the order owner's
 * GET …/orders/{id}/authorization (docs/ap2.md, "Checking it offline").
 */
import { formatAmount } from '../amounts.ts';
import { graphql } from '../api.ts';
import { operation } from '../operations.ts';
import { useAsync } from '../ui/async.ts';
import { Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

const AUTHORIZATION = operation('OrderAuthorization');

interface Mandate {
  type: string;
  checkoutMandate: string;
  mandateSha256: string;
  merchantAuthorization: string;
  merchantKid: string;
  platformProfile: string;
  platformKid: string;
  verifiedAt: string;
}

interface ApprovalRecord {
  record: string;
  recordSha256: string;
  kid: string;
  decision: string;
  policySubject: string;
  approvalAbove: string | null;
  secondApprovalAbove: string | null;
  amount: string;
  approvalsRequired: number;
  decidedAt: string;
}

interface Evidence {
  orderId: string;
  status: string;
  authorization: Mandate | null;
  approvalRecord: ApprovalRecord | null;
}

export function OrderAuthorization({ orderId }: { orderId: string }) {
  const evidence = useAsync(
    () =>
      graphql<{ purchaseOrder: Evidence | null }>(AUTHORIZATION, { orderId }).then((d) => d.purchaseOrder),
    [orderId],
  );
  return (
    <section class="panel" aria-labelledby="authorization-h" data-testid="order-authorization">
      <h2 id="authorization-h">Authorization</h2>
      {evidence.state === 'loading' ? <Loading what="the authorization" /> : null}
      {evidence.state === 'error' ? <ProblemView error={evidence.error} /> : null}
      {evidence.state === 'ok' && evidence.data === null ? <Empty>No such order.</Empty> : null}
      {evidence.state === 'ok' && evidence.data ? <EvidenceView evidence={evidence.data} /> : null}
    </section>
  );
}

function EvidenceView({ evidence }: { evidence: Evidence }) {
  const { approvalRecord: a, authorization: m } = evidence;
  return (
    <>
      {a ? (
        <div data-testid="approval-record">
          <h3>Approval decision, signed by this system</h3>
          <dl>
            <dt>Decision</dt>
            <dd>
              {a.decision} <Time at={a.decidedAt} />
            </dd>
            <dt>Policy</dt>
            <dd>
              <code>{a.policySubject}</code>: approval above {threshold(a.approvalAbove)}, a second above{' '}
              {threshold(a.secondApprovalAbove)}; {a.approvalsRequired} approval
              {a.approvalsRequired === 1 ? '' : 's'} required
            </dd>
            <dt>Amount (USD)</dt>
            <dd>{formatAmount(a.amount)}</dd>
            <dt>Signed by</dt>
            <dd>
              <code>{a.kid}</code>, record SHA-256 <code>{a.recordSha256}</code>
            </dd>
          </dl>
          <details>
            <summary>The signed record (JWS)</summary>
            <pre>{a.record}</pre>
          </details>
        </div>
      ) : (
        <Empty>
          {evidence.status === 'PENDING_APPROVAL'
            ? 'No signed approval decision yet: this order is waiting for approval.'
            : 'No signed approval decision: this order did not wait for one, or it expired or was cancelled undecided.'}
        </Empty>
      )}
      {m ? (
        <div data-testid="checkout-mandate">
          <h3>AP2 checkout mandate</h3>
          <dl>
            <dt>Platform</dt>
            <dd>
              <code>{m.platformProfile}</code>, key <code>{m.platformKid}</code>
            </dd>
            <dt>Our signature on its checkout</dt>
            <dd>
              key <code>{m.merchantKid}</code>
            </dd>
            <dt>Verified</dt>
            <dd>
              <Time at={m.verifiedAt} />, mandate SHA-256 <code>{m.mandateSha256}</code>
            </dd>
          </dl>
          <details>
            <summary>The mandate (SD-JWT with key binding) and our signature</summary>
            <pre>{m.checkoutMandate}</pre>
            <pre>{m.merchantAuthorization}</pre>
          </details>
        </div>
      ) : (
        <Empty>No AP2 mandate: this order was not completed with one.</Empty>
      )}
    </>
  );
}

const threshold = (amount: string | null) =>
  amount === null ? 'no threshold' : `${formatAmount(amount)} USD`;

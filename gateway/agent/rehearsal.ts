import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, InjectOptions } from 'fastify';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';
import type { Clock } from '../../lib/clock.ts';
import { REHEARSAL_HEADER, type Rehearsals } from '../../lib/http/rehearsal.ts';
import type { WarmUpFlow } from '../../lib/http/warm-up.ts';
import { sendProblem } from '../../lib/problem.ts';
import { REHEARSAL_OWNER_SUFFIX } from '../../subgraphs/procurement/checkout/migrations.ts';
import { ACP_VERSION } from './acp/version.ts';
import type { AuditLog } from './audit/log.ts';
import { unverifiedIdentity } from './problems.ts';

/**
 * The warm-up's agent (issue 48): a procurement-agent identity kept for the process's own
 * rehearsals (lib/http/rehearsal.ts). The default scope policy grants it what any procurement
 * agent has, so its orders run every step a real order runs.
 */
export const WARM_UP_AGENT_PATH = REHEARSAL_OWNER_SUFFIX;

export const warmUpAgentId = (trustDomain: string): string => `spiffe://${trustDomain}${WARM_UP_AGENT_PATH}`;

/** The reserved identity as the chain's steps hold an identity. */
export function warmUpIdentity(trustDomain: string): SpiffeId {
  const parsed = parseSpiffeId(warmUpAgentId(trustDomain));
  if (!parsed.ok) throw new Error(`the warm-up identity is not a SPIFFE ID: ${parsed.reason}`);
  return parsed.value;
}

/** The agent id the warm-up's orders and checkouts carry. */
export const WARM_UP_AGENT = 'warm-up-agent';

/**
 * What the checkout edges (ACP, UCP) need of the warm-up's rehearsals: whether a request is one,
 * counting its completions, the reserved identity's trust domain, and the sessions it created
 * (deleted when the warm-up ends: acp/index.ts).
 */
export interface CheckoutRehearsals extends Pick<Rehearsals, 'of' | 'count'> {
  readonly trustDomain: string;
  created(sessionId: string): void;
}

/**
 * Step 1½ (onRequest, after identity): the reserved identity rehearses when the request carries
 * this process's warm-up token while the warm-up runs; from anyone else it is refused (401), so
 * no caller can place orders, real or rehearsed, as the warm-up.
 */
export function rehearsalStep(rehearsals: Rehearsals) {
  return async function rehearsal(req: FastifyRequest, reply: FastifyReply) {
    if (req.agent.identity?.path !== WARM_UP_AGENT_PATH) return;
    if (rehearsals.of(req)) {
      req.agent.rehearsal = true;
      return;
    }
    req.agent.reason = 'identity: reserved for the warm-up';
    return sendProblem(reply, unverifiedIdentity('reserved for the warm-up'), req.url);
  };
}

/**
 * The audit records that a warm-up ran, once, with how many orders it rehearsed; the rehearsed
 * calls themselves are not audited (they bought nothing), as no purchase happened.
 */
export function auditWarmUps(
  rehearsals: Rehearsals,
  audit: AuditLog,
  clock: Clock,
  trustDomain: string,
): void {
  rehearsals.onFinish(async (counts) => {
    if (counts.order === 0 && counts.completion === 0) return;
    audit.append({
      at: clock.now(),
      traceId: 'warm-up',
      method: 'POST',
      path: 'warm-up',
      status: 200,
      durationMs: 0,
      identity: warmUpAgentId(trustDomain),
      reason: `warm-up: ${counts.order} orders and ${counts.completion} checkout completions rehearsed and rolled back; nothing stored, nothing bought`,
      identitySource: 'proxy',
      orderId: null,
    });
    await audit.flush();
  });
}

/**
 * The n-th warm-up order (lib/http/warm-up.ts sends it), in turn on the edge and the canonical
 * path, every other one with an Idempotency-Key (that step's store is warmed and given back), in
 * varied amounts and quantities, each with this process's token (`token`: lib/http/rehearsal.ts).
 */
export function orderWarmUp(trustDomain: string, sku: string, token: string): (n: number) => InjectOptions {
  const run = randomUUID();
  return (n) => ({
    method: 'POST',
    url: n % 2 ? '/v2/orders' : '/api/v2/procurement/orders',
    headers: {
      'content-type': 'application/json',
      'x-spiffe-id': warmUpAgentId(trustDomain),
      'x-trace-id': `warm-up-${n}`,
      [REHEARSAL_HEADER]: token,
      ...(n % 4 < 2 ? { 'idempotency-key': `warm-up-${run}-${n}` } : {}),
    },
    payload: JSON.stringify({
      agent_id: 'warm-up-agent',
      sku,
      quantity: 1 + (n % 7),
      max_budget_usd: n % 3 ? 120.5 : 42,
    }),
  });
}

/**
 * The n-th warm-up checkout (issue 48): an ACP session created, updated and completed on account
 * by the reserved identity, so the session core, its store's statements, the completion's spend,
 * redemption and order steps and ACP's rendering are compiled before the first real checkout.
 * The identity step takes this process's token for the reserved identity's key (acp/identity.ts);
 * the order is rolled back, what it reserved and redeemed given back (checkout/place.ts), no
 * idempotency record kept, and the sessions deleted when the warm-up ends (acp/index.ts).
 */
export function checkoutWarmUp(basePath: string, skus: readonly string[], token: string): WarmUpFlow {
  const run = randomUUID();
  const headers = (n: number, step: string) => ({
    'content-type': 'application/json',
    'api-version': ACP_VERSION,
    'idempotency-key': `warm-up-${run}-${n}-${step}`,
    'x-trace-id': `warm-up-checkout-${n}`,
    [REHEARSAL_HEADER]: token,
  });
  const items = (n: number, more: number) =>
    skus.slice(0, 2).map((sku, i) => ({ id: sku, quantity: 1 + ((n + i + more) % 3) }));
  const create = (n: number): InjectOptions => ({
    method: 'POST',
    url: `${basePath}/checkout_sessions`,
    headers: headers(n, 'create'),
    payload: JSON.stringify({ currency: 'usd', capabilities: {}, line_items: items(n, 0) }),
  });
  return {
    first: create(0),
    async run(n, send) {
      const created = await send(create(n));
      if (created.status !== 201) return;
      const { id } = JSON.parse(created.body) as { id: string };
      const updated = await send({
        method: 'POST',
        url: `${basePath}/checkout_sessions/${id}`,
        headers: headers(n, 'update'),
        payload: JSON.stringify({ line_items: items(n, 1) }),
      });
      if (updated.status !== 200) return;
      await send({
        method: 'POST',
        url: `${basePath}/checkout_sessions/${id}/complete`,
        headers: headers(n, 'complete'),
        payload: JSON.stringify({
          payment_data: { purchase_order_number: `PO-WARM-UP-${n}`, payment_terms: 'net_30' },
        }),
      });
    },
  };
}

/** A fulfilment method as a UCP checkout shows it: the lines it covers, its groups and their options. */
interface ShownMethod {
  readonly line_item_ids?: readonly string[];
  readonly groups?: readonly { readonly id: string; readonly options?: readonly { readonly id: string }[] }[];
}

/**
 * The n-th warm-up UCP checkout (issue 48): the same rehearsal over UCP's REST binding (its
 * agent, identity and profile steps take the token for the reserved identity and a profile held
 * in process: ucp/identity.ts): created with a shipping address, updated with the first option of
 * each fulfilment group selected, completed on account; signed responses, rendering and
 * negotiation run as for any platform.
 */
export function ucpCheckoutWarmUp(basePath: string, skus: readonly string[], token: string): WarmUpFlow {
  const run = randomUUID();
  const headers = (n: number, step: string) => ({
    'content-type': 'application/json',
    'idempotency-key': `warm-up-ucp-${run}-${n}-${step}`,
    'x-trace-id': `warm-up-ucp-checkout-${n}`,
    [REHEARSAL_HEADER]: token,
  });
  const lines = (n: number) =>
    skus.slice(0, 2).map((sku, i) => ({ item: { id: sku }, quantity: 1 + ((n + i) % 3) }));
  const destination = {
    street_address: '1 Warm-up Way',
    address_locality: 'Springfield',
    address_region: 'IL',
    postal_code: '62701',
    address_country: 'US',
  };
  const create = (n: number): InjectOptions => ({
    method: 'POST',
    url: `${basePath}/checkout-sessions`,
    headers: headers(n, 'create'),
    payload: JSON.stringify({
      line_items: lines(n),
      fulfillment: { methods: [{ type: 'shipping', destinations: [destination] }] },
    }),
  });
  return {
    first: create(0),
    async run(n, send) {
      const created = await send(create(n));
      if (created.status !== 201) return;
      const shown = JSON.parse(created.body) as { id: string; fulfillment?: { methods?: ShownMethod[] } };
      const methods = (shown.fulfillment?.methods ?? []).map((m) => ({
        line_item_ids: m.line_item_ids ?? [],
        groups: (m.groups ?? []).map((g) => ({ id: g.id, selected_option_id: g.options?.[0]?.id ?? '' })),
      }));
      const updated = await send({
        method: 'PUT',
        url: `${basePath}/checkout-sessions/${shown.id}`,
        headers: headers(n, 'update'),
        payload: JSON.stringify({ line_items: lines(n), fulfillment: { methods } }),
      });
      if (updated.status !== 200) return;
      await send({
        method: 'POST',
        url: `${basePath}/checkout-sessions/${shown.id}/complete`,
        headers: headers(n, 'complete'),
        payload: JSON.stringify({
          payment: {
            instruments: [
              {
                id: 'po_1',
                handler_id: 'purchase_order',
                type: 'purchase_order',
                selected: true,
                credential: { type: 'purchase_order', purchase_order_number: `PO-WARM-UP-${n}` },
              },
            ],
          },
        }),
      });
    },
  };
}

import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import { createSessionChanges } from './change.ts';
import { createCompletion } from './complete.ts';
import { createSessionCore } from './lifecycle.ts';
import { createPlacement } from './place.ts';
import { createPricer } from './price.ts';
import { recoverCompletions } from './recover.ts';
import type { CheckoutDeps } from './types.ts';

export { SKU } from './price.ts';
export * from './types.ts';

/**
 * The checkout session service: the one session core both agent-commerce protocols (ACP and
 * UCP) stand on. It prices through the cart quote (./price.ts: the same flow as GET /cart/quote,
 * so a session's total is the quote's), keeps sessions in the SQL store (./lifecycle.ts), and
 * completes one as a purchase order (./complete.ts, ./place.ts) through the same spend policy,
 * approval and order domain as POST /v2/orders. Protocol edges (gateway/agent/acp/, ucp/) only
 * translate requests and render sessions. One file per command; this one assembles them.
 */
export function createCheckoutService(d: CheckoutDeps) {
  const price = createPricer(d);
  const core = createSessionCore(d);
  const { create, update, cancel } = createSessionChanges(d, price, core);
  const complete = createCompletion(d, price, core, createPlacement(d, price, core));
  return {
    create,
    update,
    cancel,
    complete,
    recoverCompletions: () => recoverCompletions(d, core),
    get: core.load,
    list: (q: Parameters<CheckoutSessionStore['list']>[0]) => d.store.list(q),
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;

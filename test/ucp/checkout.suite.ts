/**
 * The UCP business as a platform that knows only the published specification (v2026-04-08)
 * uses it, run against a topology: the profile, and a Node port of
 * Universal-Commerce-Protocol/conformance's lifecycle, idempotency, business-logic, validation
 * and order tests (docs/ucp-conformance-plan.md says what each checks and where the port
 * follows the tag instead of the suite's 2026-01-11). Every response is validated against the
 * vendored schemas. With several gateway replicas, consecutive calls go to different replicas.
 */
import { describe } from 'vitest';
import { businessLogicTests } from './checkout/business-logic.ts';
import { lifecycleTests } from './checkout/lifecycle.ts';
import { negotiationTests } from './checkout/negotiation.ts';
import { ordersTests } from './checkout/orders.ts';
import { checkoutContext, type UcpSystem } from './checkout/support.ts';
import { validationTests } from './checkout/validation.ts';

export { expectCheckout, FIXTURE, type UcpSystem } from './checkout/support.ts';

/** The parts (./checkout/) in the order they ran as one file, on one system. */
export function ucpCheckoutSuite(label: string, start: () => Promise<UcpSystem>): void {
  describe(`UCP checkout (${label})`, () => {
    const t = checkoutContext(label, start);
    negotiationTests(t);
    lifecycleTests(t);
    businessLogicTests(t);
    validationTests(t);
    ordersTests(t);
  });
}

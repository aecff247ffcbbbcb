import { isLocalName, isPrivateAddress } from '../../../lib/net/address.ts';
import { handlerSchemaUrl, handlerSpecUrl, instrumentViolation } from './payment-handler-schema.ts';
import { UCP_VERSION } from './schema/index.ts';

/**
 * Buying on account without a payment provider: one merchant-defined payment handler, named
 * under the merchant's own reverse-DNS namespace (`<UCP_MERCHANT_NAMESPACE>.purchase_order`,
 * overview.md "Namespace Governance": `com.{vendor}.*` is the vendor's). The platform selects an
 * instrument of this handler whose credential carries the buyer's purchase order number:
 *
 *   {"id": "po_1", "handler_id": "purchase_order", "type": "purchase_order", "selected": true,
 *    "credential": {"type": "purchase_order", "purchase_order_number": "PO-2026-0042"}}
 *
 * The number becomes the order's client reference, as ACP's `purchase_order_number` does. The
 * unreleased payment-terms extension (`dev.ucp.shopping.payment_terms`, ucp PRs #602/#603) is
 * not followed: it is not in the pinned release and no platform can negotiate it; the handler's
 * `config.payment_terms` only says which terms the account is invoiced on (docs/ucp.md).
 */

export const PURCHASE_ORDER_HANDLER_ID = 'purchase_order';
export const PURCHASE_ORDER_TYPE = 'purchase_order';
export const paymentHandlerName = (namespace: string): string => `${namespace}.purchase_order`;

/** UCP_MERCHANT_NAMESPACE's default (lib/config.ts): a placeholder, not any merchant's domain. */
export const DEFAULT_MERCHANT_NAMESPACE = 'com.example';

/** Hosts that name no published merchant: reserved example/test names, localhost, private IPs. */
const isLocalOrExampleHost = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (isPrivateAddress(h) || isLocalName(h)) return true;
  return (
    ['example', 'test', 'invalid', 'example.com', 'example.net', 'example.org'].some(
      (name) => h === name || h.endsWith(`.${name}`),
    ) || h.endsWith('.local')
  );
};

/**
 * Whether to warn at start (pure): the payment handler is still named under the placeholder
 * `com.example` while the UCP endpoint platforms are given (UCP_API_BASE_URL, else
 * PUBLIC_BASE_URL + /ucp) is a real host, so every profile and checkout names a handler under
 * a domain the merchant does not own.
 */
export function defaultNamespaceInPublic(namespace: string, restEndpoint: string): boolean {
  if (namespace !== DEFAULT_MERCHANT_NAMESPACE) return false;
  let host: string;
  try {
    host = new URL(restEndpoint).hostname;
  } catch {
    return false;
  }
  return !isLocalOrExampleHost(host);
}

/**
 * The `payment_handlers` registry, as the profile (business schema) and every checkout show it,
 * with the handler's `spec` and `schema` served by this system at `origin`
 * (payment-handler-schema.ts).
 */
export function paymentHandlers(namespace: string, origin: string): Record<string, unknown[]> {
  return {
    [paymentHandlerName(namespace)]: [
      {
        id: PURCHASE_ORDER_HANDLER_ID,
        version: UCP_VERSION,
        spec: handlerSpecUrl(origin),
        schema: handlerSchemaUrl(origin),
        available_instruments: [{ type: PURCHASE_ORDER_TYPE }],
        config: { payment_terms: 'net_30', currency: 'USD' },
      },
    ],
  };
}

export type PaymentChoice =
  | { ok: true; purchaseOrderNumber: string }
  | { ok: false; path: string; content: string };

/**
 * The purchase order number of a complete request's selected instrument (pure). The selected
 * instrument is the one with `selected: true`, else the only one.
 */
export function purchaseOrderOf(payment: unknown): PaymentChoice {
  const instruments = ((payment as { instruments?: unknown[] } | undefined)?.instruments ?? []) as {
    handler_id?: unknown;
    selected?: unknown;
    credential?: { purchase_order_number?: unknown };
  }[];
  if (instruments.length === 0)
    return { ok: false, path: '$.payment.instruments', content: 'Select a payment instrument.' };
  let index = instruments.findIndex((i) => i.selected === true);
  if (index < 0 && instruments.length === 1) index = 0;
  if (index < 0)
    return { ok: false, path: '$.payment.instruments', content: 'Mark one instrument as selected.' };
  const chosen = instruments[index] as (typeof instruments)[number];
  const at = `$.payment.instruments[${index}]`;
  if (chosen.handler_id !== PURCHASE_ORDER_HANDLER_ID)
    return {
      ok: false,
      path: `${at}.handler_id`,
      content: `This business takes payment on account only: use the handler ${PURCHASE_ORDER_HANDLER_ID}.`,
    };
  // The handler's published schema decides (payment-handler-schema.ts), as a platform reads it.
  const violation = instrumentViolation(chosen);
  if (violation) return { ok: false, path: `${at}${violation.path}`, content: violation.content };
  return { ok: true, purchaseOrderNumber: chosen.credential?.purchase_order_number as string };
}

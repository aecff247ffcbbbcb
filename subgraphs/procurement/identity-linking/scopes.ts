import { ORDER_CREATE_SCOPE, ORDER_READ_SCOPE } from '../../../lib/auth/agent-scopes.ts';

/**
 * The UCP scopes this business accepts in identity linking (identity-linking.md, "Scopes"), with
 * the agent scopes each one lets a linked platform use. The token never widens an identity: a
 * call is allowed an agent scope only when the token's UCP scope maps to it AND the agent
 * identity the buyer chose holds it (./links.ts, `actingScopes`).
 *
 * `gates`: listed in the profile's `config.scopes` (a hard gate: the operations need a user
 * identity token, or this system's own platform credentials, an API key or a signature).
 *
 * Each UCP operation group is gated by its own UCP scope (`UCP_SCOPE_OF`): a linked call needs
 * that scope in the token (gateway/agent/ucp/identity.ts, `ucpScopeStep`), so checkout and cart,
 * which both need the identity to hold `orders:create`, are still granted apart (cart.md,
 * "Scopes": `cart:manage` is all cart operations; checkout.md: `checkout:manage` all checkout
 * operations).
 */
export interface UcpScope {
  readonly scope: string;
  readonly description: string;
  readonly agentScopes: readonly string[];
  readonly gates: boolean;
}

/** The UCP operations a linked token is checked for, each gated by one UCP scope. */
export type UcpOperationGroup = 'checkout' | 'order' | 'cart';

export const CHECKOUT_MANAGE = 'dev.ucp.shopping.checkout:manage';
export const ORDER_READ = 'dev.ucp.shopping.order:read';
export const CART_MANAGE = 'dev.ucp.shopping.cart:manage';

export const UCP_SCOPES: readonly UcpScope[] = [
  {
    scope: CHECKOUT_MANAGE,
    description:
      'Create, update, complete and cancel checkouts on account, as the agent identity you choose.',
    agentScopes: [ORDER_CREATE_SCOPE],
    gates: true,
  },
  {
    scope: ORDER_READ,
    description: 'Read the orders placed as that agent identity.',
    agentScopes: [ORDER_READ_SCOPE],
    gates: true,
  },
  {
    scope: CART_MANAGE,
    description: 'Build carts (estimated prices, no payment, nothing held) as that agent identity.',
    agentScopes: [ORDER_CREATE_SCOPE],
    gates: true,
  },
];

export const UCP_SCOPE_NAMES: readonly string[] = UCP_SCOPES.map((s) => s.scope);

/** The UCP scope that gates each operation group (the `scope` of its 403 challenge). */
export const UCP_SCOPE_OF: Readonly<Record<UcpOperationGroup, string>> = {
  checkout: CHECKOUT_MANAGE,
  order: ORDER_READ,
  cart: CART_MANAGE,
};

/** Space-separated OAuth scope string to its known UCP scopes (unknown ones dropped). Pure. */
export function parseScope(scope: string | undefined): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(' ').filter((s) => UCP_SCOPE_NAMES.includes(s)))];
}

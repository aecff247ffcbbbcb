/**
 * UCP's cart capability (cart.md, cart-rest.md, v2026-04-08) on the embedded system, as a
 * platform that knows only the specification uses it: the profile declares
 * `dev.ucp.shopping.cart`; create, get, update, cancel answer carts valid against the vendored
 * cart.json, priced exactly as GET /cart/quote (property); items by SKU or by the merchant's
 * feed ids; conversion by `cart_id` (one incomplete checkout per cart, a completed one clears the
 * cart); a cart holds no stock and spends no budget; hostile input is 4xx, nothing stored.
 */
import { capabilityTests } from './ucp/capability.ts';
import { checkoutTests } from './ucp/checkout.ts';
import { hostileTests } from './ucp/hostile.ts';
import { cartContext } from './ucp/support.ts';

/** The parts in the order they ran as one file, on one system. */
const t = cartContext();
capabilityTests(t);
checkoutTests(t);
hostileTests(t);

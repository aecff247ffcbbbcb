/**
 * Issue 49's cart goal as a table: in each open-loop round of the ACP group (./run.ts), the ACP
 * cart flows' create and update against the checkout sessions' create and update at the same
 * rate (the step "alone" of the same round), p50/p99/p99.9 from each request's due time.
 */
import type { AcpRun } from './run.ts';

const CART_OPS = ['create', 'update'] as const;

const fmt = (n: number, d = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Met when the cart's p99 is at most the session's and no cart request failed. */
export function cartGoalMet(cart: { p99: number; failed: number }, session: { p99: number }): boolean {
  return cart.p99 <= session.p99 && cart.failed === 0;
}

export function cartTable(r: AcpRun): string {
  const lines = [
    '| round | operation | cart p50 ms | cart p99 ms | cart p99.9 ms | cart failed | session p50 ms | session p99 ms | session p99.9 ms | session failed | cart p99 ≤ session p99 |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  let met = 0;
  let rows = 0;
  for (const [i, cart] of r.carts.entries()) {
    const session = r.alone[i];
    if (!session) continue;
    const order = i % 2 ? 'carts first' : 'sessions first';
    for (const op of CART_OPS) {
      const c = cart.ops[op];
      const s = session.ops[op];
      const ok = cartGoalMet(c, s);
      met += ok ? 1 : 0;
      rows++;
      lines.push(
        `| ${i + 1} (${order}) | ${op} | ${fmt(c.p50)} | ${fmt(c.p99)} | ${fmt(c.p999)} | ${c.failed} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.p999)} | ${s.failed} | ${ok ? 'yes' : 'no'} |`,
      );
    }
  }
  const counts = r.carts.map((c) => `${c.ops.create.count} creates, ${c.ops.update.count} updates`);
  return `${lines.join('\n')}\n\nOpen loop at ${r.rate} flows/s (50 % of the checkout flows' closed-loop maximum), ${r.carts.length} round${r.carts.length > 1 ? 's' : ''}; cart requests measured per round: ${counts.join('; ')}. The goal (cart p99 ≤ the checkout session's, no cart request failed) met in ${met} of ${rows} rows. Before the rounds, cart flows closed loop (10 at a time, the cart routes' warm-up): ${fmt(r.cartsClosed.flowsPerSecond, 0)} flows/s (create p99 ${fmt(r.cartsClosed.ops.create.p99)} ms, update p99 ${fmt(r.cartsClosed.ops.update.p99)} ms), against ${fmt(r.closed.flowsPerSecond, 0)} checkout flows/s.`;
}

import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import {
  createSession,
  isOpen,
  type NewSession,
  newSessionId,
  type SessionChange,
  updateSession,
  withStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { SessionCore } from './lifecycle.ts';
import type { Price } from './price.ts';
import {
  type CheckoutDeps,
  CheckoutUnavailable,
  type CreateCommand,
  type Created,
  type Outcome,
} from './types.ts';

/** How often a change is recomputed when another one of the same session landed first. */
const CAS_ROUNDS = 3;

/** The commands that open and change a session before its completion: create, update, cancel. */
export function createSessionChanges(d: CheckoutDeps, price: Price, core: SessionCore) {
  const { load, current } = core;
  async function create(c: CreateCommand): Promise<Created> {
    const pricing = await price(c.items, c.codes, c.currency, c.region, c.agentId);
    const n: NewSession = {
      id: c.id ?? newSessionId(),
      protocol: c.protocol,
      owner: c.owner.id,
      agentId: c.agentId,
      keyId: c.keyId,
      ...(c.channel ? { channel: c.channel } : {}),
      currency: c.currency,
      region: c.region,
      items: c.items,
      codes: c.codes,
      extensions: c.extensions,
      buyer: c.buyer,
      fulfillment: c.fulfillment,
      ttlMs: d.sessionTtlMs,
    };
    const s = createSession(n, pricing, d.clock.now());
    if (await d.store.insert(s)) return { session: s, existing: false };
    // Taken: by the same request's twin (its session stands), by a request that used the key
    // before its record expired (this one is new), or, for a random id, a collision that
    // cannot happen by chance.
    const twin = c.id ? await load(c.id, c.owner) : null;
    if (twin && d.clock.now() - twin.createdAt < (c.replayWithinMs ?? Number.POSITIVE_INFINITY))
      return { session: twin, existing: true };
    if (twin) return create({ ...c, id: undefined });
    throw new Error(`checkout session id ${s.id} collided`);
  }

  async function update(id: string, owner: SpiffeId, change: SessionChange): Promise<Outcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const s = await load(id, owner);
      if (!s) return { kind: 'not-found' };
      if (s.status === 'complete_in_progress') return { kind: 'busy', session: s };
      if (!isOpen(s)) return { kind: 'not-allowed', session: s };
      const items = change.items ?? s.items;
      const codes = change.codes ?? s.codes;
      const pricing = await price(items, codes, s.currency, change.region ?? s.region, s.agentId);
      const next = updateSession(s, change, pricing, d.clock.now());
      if (await d.store.replace(next)) return { kind: 'ok', session: next };
    }
    throw new CheckoutUnavailable('the session kept changing while it was updated');
  }

  async function cancel(id: string, owner: SpiffeId): Promise<Outcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const s = await load(id, owner);
      if (!s) return { kind: 'not-found' };
      if (s.status === 'complete_in_progress') return { kind: 'busy', session: s };
      if (s.status === 'pending_approval' && s.orderId) {
        // The agent withdraws its order while it waits: the order domain cancels it (the spend
        // reservation goes back with it), and the session follows.
        const r = await d.orders.cancel(s.orderId, owner.id).catch((err: unknown) => {
          throw new CheckoutUnavailable(err instanceof Error ? err.message : 'order domain unavailable');
        });
        if (r.kind === 'not-cancellable') return { kind: 'not-allowed', session: await current(s) };
      } else if (!isOpen(s)) return { kind: 'not-allowed', session: s };
      const next = withStatus(s, 'canceled', d.clock.now());
      if (await d.store.replace(next)) return { kind: 'ok', session: next };
    }
    throw new CheckoutUnavailable('the session kept changing while it was canceled');
  }

  return { create, update, cancel };
}

import type { Clock } from '../../../lib/clock.ts';
import { type Db, migrate } from '../../../lib/db/index.ts';
import type { EventBus } from '../../../lib/events/bus.ts';
import { clientMetadata, type PlatformClientInput } from './clients.ts';
import { type PlatformLink, RevokedGrants } from './links.ts';
import { identityLinkingMigrations } from './migrations.ts';
import { type PlatformLinks, sqlPlatformLinks } from './store.ts';

/** How long an access token lives (s): also how long a revoked grant is remembered. */
export const ACCESS_TOKEN_TTL_S = 600;

/** The event every replica receives when a grant is revoked (platform.bus: Redis Streams distributed). */
export const GRANT_REVOKED = 'identity-linking.grant.revoked';

export interface GrantRevokedEvent {
  readonly grantId: string;
  /** Until when its access tokens may be alive (ms since the epoch). */
  readonly untilMs: number;
}

export interface IdentityLinking {
  readonly links: PlatformLinks;
  /** Checked on every token check: a Map lookup, no I/O. */
  readonly revoked: RevokedGrants;
  /**
   * Revokes a grant everywhere: its codes, refresh tokens and the grant are deleted, the link is
   * marked revoked, this process forgets it at once and every other replica on the event.
   * `by` is the operator or `oauth` (the platform's own RFC 7009 call, a replayed code or a
   * reused refresh token). True the first time the link was revoked.
   */
  revoke(grantId: string, by: string): Promise<boolean>;
  /** Remembers a revocation made elsewhere (the provider deleted the models itself). */
  recordRevoked(grantId: string, by: string): Promise<void>;
  /** Registers a platform as an OAuth client (validated: ClientInputInvalid); its metadata, client_id included. */
  registerClient(
    input: PlatformClientInput,
    opts?: { allowInsecureProfiles?: boolean; by?: string | null },
  ): Promise<Record<string, unknown>>;
  /** Every registered client's metadata, newest registration first (those without a time last). */
  clients(): Promise<Record<string, unknown>[]>;
  close(): void;
}

const byBus = new WeakMap<EventBus, Promise<IdentityLinking>>();

/**
 * The linking state of this process's SQL store and bus, migrations applied, the revoked set
 * filled from the store's recent revocations and kept current by the event. One per platform (its bus):
 * the embedded procurement module and gateway share it.
 */
export function identityLinkingFor(p: { db: Db; bus: EventBus; clock: Clock }): Promise<IdentityLinking> {
  let got = byBus.get(p.bus);
  if (!got) {
    got = start(p);
    got.catch(() => byBus.delete(p.bus));
    byBus.set(p.bus, got);
  }
  return got;
}

async function start(p: { db: Db; bus: EventBus; clock: Clock }): Promise<IdentityLinking> {
  await migrate(p.db, identityLinkingMigrations);
  const links = sqlPlatformLinks(p.db);
  const revoked = new RevokedGrants();
  // Subscribed before the stored revocations are read, so none falls between the two.
  const unsubscribe = p.bus.subscribe(GRANT_REVOKED, async (e) => {
    const d = e.data as GrantRevokedEvent;
    if (typeof d?.grantId === 'string' && typeof d.untilMs === 'number') revoked.add(d.grantId, d.untilMs);
  });
  for (const r of await links.revokedSince(p.clock.now())) revoked.add(r.grantId, r.untilMs);
  const prune = setInterval(() => revoked.prune(p.clock.now()), 60_000);
  prune.unref();

  const remember = async (grantId: string, by: string): Promise<boolean> => {
    const now = p.clock.now();
    const untilMs = now + ACCESS_TOKEN_TTL_S * 1000;
    revoked.add(grantId, untilMs);
    await links.rememberRevoked(grantId, untilMs);
    const first = await links.markRevoked(grantId, by, now);
    await p.bus.publish<GrantRevokedEvent>(GRANT_REVOKED, { grantId, untilMs }, grantId);
    return first;
  };

  return {
    links,
    revoked,
    async revoke(grantId, by) {
      await p.db.query("DELETE FROM oauth_models WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)", [
        grantId,
      ]);
      return remember(grantId, by);
    },
    async recordRevoked(grantId, by) {
      await remember(grantId, by);
    },
    async registerClient(input, opts = {}) {
      const metadata = clientMetadata(input, {
        ...(opts.allowInsecureProfiles === undefined
          ? {}
          : { allowInsecureProfiles: opts.allowInsecureProfiles }),
        registered: { atMs: p.clock.now(), by: opts.by ?? null },
      });
      await p.db.query("INSERT INTO oauth_models (model, id, payload) VALUES ('Client', $1, $2)", [
        metadata.client_id,
        JSON.stringify(metadata),
      ]);
      return metadata;
    },
    async clients() {
      const rows = await p.db.query<{ payload: Record<string, unknown> }>(
        "SELECT payload FROM oauth_models WHERE model = 'Client'",
      );
      const at = (m: Record<string, unknown>) =>
        typeof m.registered_at === 'string' ? Date.parse(m.registered_at) : 0;
      return rows
        .map((r) => r.payload)
        .sort((a, b) => at(b) - at(a) || String(a.client_id).localeCompare(String(b.client_id)));
    },
    close() {
      clearInterval(prune);
      unsubscribe();
    },
  };
}

export type { PlatformLink };

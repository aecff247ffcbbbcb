/**
 * The platform identity of UCP calls on the distributed topology (pricing, promotions and
 * procurement in their own processes, two gateway replicas, Redis and PostgreSQL): a signed
 * platform is one identity whichever replica verifies it (each fetches and caches the profile on
 * its own), the refusals are the same on each, and a key bound to a profile (key-binding.test.ts)
 * is checked by a replica that did not issue it. A few cases of signature.test.ts, not all: the
 * verifier is the same code; what differs here is that state (sessions, keys) is shared.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from './checkout.suite.ts';
import { publicJwk, type SignOpts, signedIdentity, ucpSigner } from './support/sign.ts';

/** Runs on the topology `topology` gives (test/ucp/distributed.test.ts shares one), which it does not stop. */
export function ucpSignatureSuite(topology: () => Promise<DistributedSystem>): void {
  const KID = 'platform-dist-2026';
  let sys: DistributedSystem;
  let profiles: ProfileServer;
  let profileUrl: string;
  let platformKey: KeyObject;
  let otherKey: KeyObject;

  beforeAll(async () => {
    sys = await topology();
    profiles = await startProfileServer();
    platformKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    profileUrl = profiles.set(
      '/signed/profile.json',
      platformProfile({ signingKeys: [publicJwk(platformKey, KID, 'ES256')] }),
    );
  }, 300_000);
  afterAll(async () => {
    await profiles?.close();
  });

  const gateway = (n: 0 | 1) => sys.gateways[n] as string;
  const signed = ucpSigner({
    base: () => gateway(0),
    profileUrl: () => profileUrl,
    key: () => platformKey,
    kid: KID,
  });
  const LINE = { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] };

  describe('UCP platform identity across two gateway replicas', () => {
    it('a checkout signed on one replica is updated, read and completed signed on the other: one identity', async () => {
      const c = expectCheckout(
        await signed('POST', '/checkout-sessions', {
          ...LINE,
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        }),
        201,
      );
      const u = expectCheckout(
        await signed(
          'PUT',
          `/checkout-sessions/${c.id}`,
          {
            ...LINE,
            fulfillment: {
              methods: [
                {
                  line_item_ids: ['li_0'],
                  groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
                },
              ],
            },
          },
          { base: gateway(1) },
        ),
      );
      expect(u.status).toBe('ready_for_complete');
      const done = expectCheckout(
        await signed(
          'POST',
          `/checkout-sessions/${c.id}/complete`,
          {
            payment: purchaseOrderPayment('PO-SIG-DIST-1'),
          },
          { base: gateway(1) },
        ),
      );
      expect(done.status).toBe('completed');
      expect(expectCheckout(await signed('GET', `/checkout-sessions/${c.id}`)).status).toBe('completed');

      // The documented identity owns it: a key issued for it (bound to the profile) reads it on
      // either replica, another identity's key gets 404.
      const owner = await issueKey(sys, {
        spiffeId: signedIdentity(profileUrl),
        agentId: `agent-ucp-sigd-${process.pid}`,
        ucpProfile: profileUrl,
      });
      const stranger = await issueKey(sys, {
        spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-sigd-stranger-${process.pid}`,
        ucpProfile: profileUrl,
      });
      for (const n of [0, 1] as const) {
        const mine = await ucpCall(
          gateway(n),
          { key: owner.key, profileUrl },
          'GET',
          `/checkout-sessions/${c.id}`,
        );
        expect(expectCheckout(mine).status).toBe('completed');
        const theirs = await ucpCall(
          gateway(n),
          { key: stranger.key, profileUrl },
          'GET',
          `/checkout-sessions/${c.id}`,
        );
        expect(theirs.status).toBe(404);
      }
    });

    it('a body-less cancel signed for one replica verifies there; signed for one and sent to the other it is refused (@authority)', async () => {
      const c = expectCheckout(await signed('POST', '/checkout-sessions', LINE), 201);
      const replayed = await signed('POST', `/checkout-sessions/${c.id}/cancel`, undefined, {
        sendTo: gateway(1),
      });
      expect([replayed.status, replayed.body.code]).toEqual([401, 'signature_invalid']);
      const cancel = await signed('POST', `/checkout-sessions/${c.id}/cancel`, undefined, {
        base: gateway(1),
      });
      expect(expectCheckout(cancel).status).toBe('canceled');
    });

    const refusals: [string, () => SignOpts, number, string][] = [
      ['a key not in the profile', () => ({ key: otherKey }), 401, 'signature_invalid'],
      ['a keyid the profile does not list', () => ({ kid: 'platform-1999' }), 401, 'key_not_found'],
      [
        'a tampered body',
        () => ({ sendBody: JSON.stringify({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: 9 }] }) }),
        400,
        'digest_mismatch',
      ],
    ];
    it.each(refusals)('refuses %s on both replicas alike', async (_what, opts, status, code) => {
      for (const n of [0, 1] as const) {
        const r = await signed('POST', '/checkout-sessions', LINE, { ...opts(), base: gateway(n) });
        expect([n, r.status, r.body.code]).toEqual([n, status, code]);
      }
    });

    it('a key bound to the profile acts on either replica; another profile or an unbound key is 403 profile_not_trusted', async () => {
      const elsewhere = profiles.set('/elsewhere/profile.json', platformProfile());
      const bound = await issueKey(sys, {
        spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-bound-dist-${process.pid}`,
        ucpProfile: profileUrl,
      });
      const unbound = await issueKey(sys, {
        spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-unbound-dist-${process.pid}`,
      });
      for (const n of [0, 1] as const) {
        const ok = await ucpCall(
          gateway(n),
          { key: bound.key, profileUrl },
          'POST',
          '/checkout-sessions',
          LINE,
        );
        expect([n, ok.status]).toEqual([n, 201]);
        const other = await ucpCall(
          gateway(n),
          { key: bound.key, profileUrl: elsewhere },
          'POST',
          '/checkout-sessions',
          LINE,
        );
        expect([n, other.status, other.body.code]).toEqual([n, 403, 'profile_not_trusted']);
        const none = await ucpCall(
          gateway(n),
          { key: unbound.key, profileUrl },
          'POST',
          '/checkout-sessions',
          LINE,
        );
        expect([n, none.status, none.body.code]).toEqual([n, 403, 'profile_not_trusted']);
      }
    });
  });
}

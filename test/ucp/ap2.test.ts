/**
 * AP2 mandates on the UCP checkout (ap2-mandates.md at v2026-04-08), on the embedded system, the
 * test playing the platform (support/ap2.ts: its own ES256 key, mandates made by @sd-jwt, our
 * signature checked with jose and canonicalize). The extension advertised, every checkout of a
 * locked session signed, a completion with a mandate; then every hostile mandate the issue
 * lists, each refused with the spec's code, the checkout left uncompleted, the refusal audited.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectCheckout } from './checkout.suite.ts';
import { AP2, ap2Platform, ap2World, auditOf, type Checkout, verifyBusiness } from './support/ap2.ts';
import { withAlgNone, withKbAlgNone } from './support/mandate.ts';

/** The vendored extension schema's patterns (schemas/ucp/v2026-04-08/README.md, quirk 5). */
const PATTERNS = (
  JSON.parse(
    readFileSync(
      new URL('../../schemas/ucp/v2026-04-08/schemas/shopping/ap2_mandate.json', import.meta.url),
      'utf8',
    ),
  ) as { $defs: Record<string, { pattern: string }> }
).$defs;

const w = ap2World();

describe('AP2 mandates on the UCP checkout (ap2-mandates.md v2026-04-08)', () => {
  it('advertises the extension with dc+sd-jwt, extending checkout, beside ES256 signing_keys with kids', async () => {
    const profile = (await (await fetch(`${w.sys.url}/.well-known/ucp`)).json()) as {
      ucp: { capabilities: Record<string, { extends?: string; config?: unknown }[]> };
    };
    expect(profile.ucp.capabilities[AP2]?.[0]).toMatchObject({
      extends: 'dev.ucp.shopping.checkout',
      config: { vp_formats_supported: { 'dc+sd-jwt': {} } },
    });
    expect(w.businessKeys.length).toBeGreaterThan(0);
    for (const k of w.businessKeys)
      expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: expect.any(String) });
  });

  it('signs every checkout of a negotiated session, and completes with a mandate of the signed checkout', async () => {
    const p = await ap2Platform(w);
    const c = await p.ready();
    expect((c.ucp as { capabilities: Record<string, unknown> }).capabilities[AP2]).toBeDefined();
    expect(c.ap2).toEqual({
      merchant_authorization: expect.stringMatching(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/),
    });
    expect(await verifyBusiness(w, c)).toBe(true);
    const read = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    expect(await verifyBusiness(w, read)).toBe(true);
    // One member changed and the signature no longer holds: it covers the whole checkout.
    expect(await verifyBusiness(w, { ...read, expires_at: '2099-01-01T00:00:00.000Z' })).toBe(false);
    expect(
      new RegExp(PATTERNS.merchant_authorization?.pattern ?? '^$').test(
        String((read.ap2 as { merchant_authorization: string }).merchant_authorization),
      ),
    ).toBe(true);
    const m = await p.mandate(read);
    // The tag's checkout_mandate pattern refuses this real SD-JWT+kb (its KB-JWT has dots): not applied.
    expect(new RegExp(PATTERNS.checkout_mandate?.pattern ?? '').test(m)).toBe(false);
    const done = expectCheckout(await p.complete(c.id, { checkout_mandate: m }));
    expect(done.status).toBe('completed');
    expect(await verifyBusiness(w, done)).toBe(true);
    const rows = await auditOf(w, p.spiffeId, '/complete', 1);
    expect(rows.at(-1)?.status).toBe(200);
  });

  it('does not sign, nor ask for a mandate, when the platform does not list the extension', async () => {
    const p = await ap2Platform(w, () => w.plainProfileUrl);
    const c = await p.ready();
    expect(c.ap2).toBeUndefined();
    expect((c.ucp as { capabilities: Record<string, unknown> }).capabilities[AP2]).toBeUndefined();
    expect(expectCheckout(await p.complete(c.id)).status).toBe('completed');
  });

  it('keeps a session locked when a later request comes with a profile that no longer lists AP2', async () => {
    let url = w.profileUrl;
    const p = await ap2Platform(w, () => url);
    const c = await p.ready();
    url = w.plainProfileUrl;
    const read = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    expect(await verifyBusiness(w, read)).toBe(true);
    const r = await p.complete(c.id);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('mandate_required');
  });

  type P = Awaited<ReturnType<typeof ap2Platform>>;
  /** Each hostile completion: what the platform sends for checkout `c` (its signed body `c`). */
  const HOSTILE: [string, number, string, (p: P, c: Checkout) => Promise<unknown>][] = [
    ['no mandate', 400, 'mandate_required', async () => ({})],
    [
      'a mandate signed with a key not in the profile',
      403,
      'mandate_invalid_signature',
      (p, c) => p.mandate(c, { issuerKey: w.otherKey }),
    ],
    [
      'a kid the profile does not have',
      422,
      'agent_missing_key',
      (p, c) => p.mandate(c, { kid: 'someone-else' }),
    ],
    [
      'the key binding stripped',
      403,
      'mandate_invalid_signature',
      (p, c) => p.mandate(c, { noKeyBinding: true }),
    ],
    [
      'the key binding for another audience',
      403,
      'mandate_scope_mismatch',
      (p, c) => p.mandate(c, { aud: 'https://other.example/.well-known/ucp' }),
    ],
    [
      'the confirmation older than an hour',
      403,
      'mandate_expired',
      (p, c) => p.mandate(c, { iat: Math.floor(Date.now() / 1000) - 7200 }),
    ],
    [
      'an expired mandate',
      403,
      'mandate_expired',
      (p, c) => p.mandate(c, { exp: Math.floor(Date.now() / 1000) - 300 }),
    ],
    [
      'a mandate that discloses nothing',
      403,
      'mandate_scope_mismatch',
      (p, c) => p.mandate(c, { discloseNothing: true }),
    ],
    ['alg none', 403, 'mandate_invalid_signature', async (p, c) => withAlgNone(await p.mandate(c))],
    [
      'a key binding JWT with alg none',
      403,
      'mandate_invalid_signature',
      async (p, c) => withKbAlgNone(await p.mandate(c)),
    ],
    [
      'an edited total inside a valid-looking mandate',
      403,
      'merchant_authorization_invalid',
      (p, c) =>
        p.mandate({
          ...c,
          totals: (c.totals as { type: string; amount: number }[]).map((t) => ({ ...t, amount: 1 })),
        }),
    ],
    [
      'the merchant signature stripped',
      403,
      'merchant_authorization_missing',
      (p, c) => p.mandate({ ...c, ap2: undefined }),
    ],
    [
      'the merchant signature moved from another session',
      403,
      'merchant_authorization_invalid',
      async (p, c) => {
        const other = await p.ready();
        return p.mandate({ ...c, ap2: other.ap2 });
      },
    ],
    [
      'a mandate for another checkout',
      403,
      'mandate_scope_mismatch',
      async (p) => p.mandate(await p.ready()),
    ],
    [
      'another checkout, with this checkout id as nonce',
      403,
      'mandate_scope_mismatch',
      async (p, c) => p.mandate(await p.ready(), { nonce: c.id }),
    ],
    ['a mandate of 1 MB', 413, '', async () => 'e'.repeat(1024 * 1024)],
    ['a mandate that is not a string', 400, 'mandate_required', async () => ({ checkout_mandate: 42 })],
  ];

  it.each(HOSTILE)(
    'refuses %s (%i %s), completes nothing, audits the refusal',
    async (_what, status, code, make) => {
      const p = await ap2Platform(w);
      const c = await p.ready();
      const made = await make(p, c);
      const ap2 = typeof made === 'string' ? { checkout_mandate: made } : made;
      const r = await p.complete(c.id, ap2);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(status);
      if (code) expect(r.body.code).toBe(code);
      expect(typeof r.body.content).toBe('string');
      const after = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
      expect(after.status).toBe('ready_for_complete');
      expect(after.order).toBeUndefined();
      const rows = await auditOf(w, p.spiffeId, '/complete', 1);
      expect(rows.at(-1)?.status).toBe(status);
      if (code) expect(rows.at(-1)?.reason).toContain(code);
    },
  );

  it('refuses a mandate replayed on a second checkout, and its reuse on the first', async () => {
    const p = await ap2Platform(w);
    const a = await p.ready();
    const b = await p.ready();
    const m = await p.mandate(a);
    expect(expectCheckout(await p.complete(a.id, { checkout_mandate: m })).status).toBe('completed');
    const second = await p.complete(b.id, { checkout_mandate: m });
    expect(second.status).toBe(403);
    expect(second.body.code).toBe('mandate_scope_mismatch');
    expect(expectCheckout(await p.call('GET', `/checkout-sessions/${b.id}`)).status).toBe(
      'ready_for_complete',
    );
    const again = await p.complete(a.id, { checkout_mandate: m });
    expect(again.status).toBe(409);
  });

  it('completes once when the same mandate is sent twice at once (two Idempotency-Keys)', async () => {
    const p = await ap2Platform(w);
    const c = await p.ready();
    const m = await p.mandate(c);
    // The same mandate, under two Idempotency-Keys at once: one completes, the other is refused.
    const [x, y] = await Promise.all([
      p.complete(c.id, { checkout_mandate: m }),
      p.complete(c.id, { checkout_mandate: m }),
    ]);
    const statuses = [x.status, y.status].sort();
    expect(statuses[0]).toBe(200);
    expect(statuses[1]).toBeGreaterThanOrEqual(403);
    expect(statuses[1]).toBeLessThan(500);
  });
});

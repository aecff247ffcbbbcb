/**
 * The world of the AP2 tests (test/ucp/ap2*.test.ts): the embedded system, and the test as a UCP
 * platform with its own ES256 key in its profile's `signing_keys` and `ap2_mandate` among its
 * capabilities (and a second profile without it); mandates made with the @sd-jwt library
 * (./mandate.ts), the business's signature checked with jose over canonicalize's bytes from the
 * keys of /.well-known/ucp: nothing of the system's own AP2 code.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { compactVerify, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, expect } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  ucpCall,
} from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from '../checkout.suite.ts';
import { type MandateOpts, makeMandate } from './mandate.ts';
import { publicJwk } from './sign.ts';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string;
export const AP2 = 'dev.ucp.shopping.ap2_mandate';
export const KID = 'platform-ap2-2026';

export type Checkout = Record<string, unknown> & { id: string; status: string };

export interface Ap2World {
  sys: TestSystem;
  profiles: ProfileServer;
  profileUrl: string;
  plainProfileUrl: string;
  platformKey: KeyObject;
  otherKey: KeyObject;
  holder: KeyObject;
  /** The business profile URL: a mandate's key binding audience. */
  audience: string;
  businessKeys: JWK[];
}

/**
 * Starts the world before the file's tests (and stops it after); its fields are set in beforeAll.
 * `env`: more of the system's settings (the console's directory, for a browser test).
 */
export function ap2World(env: () => Record<string, string> = () => ({})): Ap2World {
  const w = {} as Ap2World;
  beforeAll(async () => {
    w.sys = await startEmbedded({
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      RATE_LIMIT_CAPACITY: '100000',
      RATE_LIMIT_REFILL_PER_SECOND: '100000',
      ...env(),
    });
    w.profiles = await startProfileServer();
    w.platformKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    w.otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    w.holder = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    w.profileUrl = w.profiles.set(
      '/ap2/profile.json',
      platformProfile({
        capabilities: ['checkout', 'order', 'discount', 'fulfillment', 'ap2_mandate'],
        signingKeys: [publicJwk(w.platformKey, KID, 'ES256')],
      }),
    );
    w.plainProfileUrl = w.profiles.set('/plain/profile.json', platformProfile());
    const business = (await (await fetch(`${w.sys.url}/.well-known/ucp`)).json()) as {
      signing_keys: JWK[];
      ucp: { services: Record<string, { transport: string; endpoint: string }[]> };
    };
    w.businessKeys = business.signing_keys;
    const rest = business.ucp.services['dev.ucp.shopping']?.find((s) => s.transport === 'rest');
    w.audience = `${new URL(rest?.endpoint ?? w.sys.url).origin}/.well-known/ucp`;
  }, 120_000);
  afterAll(async () => {
    await w.profiles?.close();
    await w.sys?.close();
  });
  return w;
}

let platforms = 0;

/** A platform of its own (identity, API key bound to the profile server); `url`: the profile it names. */
export async function ap2Platform(w: Ap2World, url = () => w.profileUrl) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ap2-${++platforms}-${process.pid}`;
  const { key } = await issueKey(w.sys, { spiffeId, ucpProfile: w.profiles.origin });
  const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
    ucpCall(w.sys.url, { key, profileUrl: url() }, method, path, body);
  /** A checkout of item A, shipping selected: ready to complete. */
  const ready = async (): Promise<Checkout> => {
    const c = expectCheckout(
      await call('POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
      }),
      201,
    );
    const u = expectCheckout(await call('PUT', `/checkout-sessions/${c.id}`, SELECT));
    expect(u.status).toBe('ready_for_complete');
    return u;
  };
  const complete = (id: string, ap2?: unknown) =>
    call('POST', `/checkout-sessions/${id}/complete`, {
      payment: PAYMENT,
      ...(ap2 === undefined ? {} : { ap2 }),
    });
  const mandate = (checkout: Record<string, unknown>, o?: MandateOpts) =>
    makeMandate(checkout, { key: w.platformKey, kid: KID, holder: w.holder, audience: w.audience }, o);
  return { spiffeId, key, call, ready, complete, mandate };
}

/** The update that selects the one shipping option for item A. */
export const SELECT = {
  line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
  fulfillment: {
    methods: [
      { line_item_ids: ['li_0'], groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }] },
    ],
  },
};

/** One selected purchase-order instrument. */
export const PAYMENT = purchaseOrderPayment('PO-AP2-1');

/** The business's signature as a platform checks it (verify_merchant_authorization), independently. */
export async function verifyBusiness(w: Ap2World, checkout: Record<string, unknown>): Promise<boolean> {
  const jws = (checkout.ap2 as { merchant_authorization?: string } | undefined)?.merchant_authorization ?? '';
  const [header = '', empty, signature = ''] = jws.split('.');
  if (empty !== '') return false;
  const h = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; kid: string };
  const jwk = w.businessKeys.find((k) => k.kid === h.kid);
  if (!jwk || h.alg !== 'ES256') return false;
  const { ap2: _ap2, ...payload } = checkout;
  const body = Buffer.from(canonicalize(payload)).toString('base64url');
  try {
    await compactVerify(`${header}.${body}.${signature}`, await importJWK(jwk, 'ES256'));
    return true;
  } catch {
    return false;
  }
}

type Row = { status: number; reason: string | null };

/** The identity's audit entries on paths ending in `path`, waiting (up to 2 s) until `n` are written. */
export async function auditOf(w: Ap2World, identity: string, path: string, n: number): Promise<Row[]> {
  let rows: Row[] = [];
  for (let i = 0; i < 200 && rows.length < n; i++) {
    rows = await w.sys.platform.db.query<Row>(
      'SELECT status, reason FROM agent_audit_log WHERE identity = $1 AND path LIKE $2 ORDER BY seq',
      [identity, `%${path}`],
    );
    if (rows.length < n) await new Promise((r) => setTimeout(r, 10));
  }
  return rows;
}

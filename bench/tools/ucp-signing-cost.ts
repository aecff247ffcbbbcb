/**
 * What signing and verifying cost on the UCP checkout (docs/ap2.md, "Cost"): in process, on a
 * 5-line checkout (~1.3 kB), each operation 5000 times after 200 warm-up calls, the key ring's
 * freshness check (a stat) included where the routes pay it:
 *   node --max-semi-space-size=256 --import tsx bench/tools/ucp-signing-cost.ts
 * Beside the time, the bytes allocated a call: the heap's growth over batches of 50 calls (the
 * median of 9; a batch in which a collection ran is left out), which needs a young generation
 * large enough that 50 calls fit (--max-semi-space-size=256).
 * - the RFC 9421 response signature (Content-Digest + ECDSA P-256) every UCP answer carries;
 * - ap2.merchant_authorization (JCS + ES256 detached JWS) every checkout of a locked session carries;
 * - a completion's verification: the SD-JWT+kb mandate (@sd-jwt) and our signature inside it.
 * A key ring is made in a temporary directory; nothing else is read or written.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digest, ES256 } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { bodyFingerprint } from '../../gateway/agent/acp/idempotency.ts';
import { verifyCheckoutMandate } from '../../lib/ap2/checkout-mandate.ts';
import {
  signMerchantAuthorization,
  verifyMerchantAuthorization,
} from '../../lib/ap2/merchant-authorization.ts';
import { signHttpResponse, signHttpResponseWithLibrary } from '../../lib/http-signature/sign.ts';
import { ucpPublicJwks, ucpSigningKey } from '../../subgraphs/procurement/webhooks/ucp-signing-key.ts';

const config = { DATA_DIR: mkdtempSync(join(tmpdir(), 'ucp-signing-cost-')) };
const line = (i: number) => ({
  id: `li_${i}`,
  item: { id: `SKU-ABC-00000${i}`, title: 'A product with a title of some length', price: 1299 },
  quantity: 2,
  totals: [
    { type: 'subtotal', amount: 2598 },
    { type: 'total', amount: 2598 },
  ],
});
const checkout: Record<string, unknown> = {
  ucp: {
    version: '2026-04-08',
    status: 'success',
    capabilities: { 'dev.ucp.shopping.checkout': [{ version: '2026-04-08' }] },
  },
  id: 'cs_0123456789abcdef0123456789abcdef',
  status: 'ready_for_complete',
  currency: 'USD',
  line_items: [0, 1, 2, 3, 4].map(line),
  totals: [
    { type: 'subtotal', amount: 12990 },
    { type: 'total', amount: 12990 },
  ],
  messages: [],
  links: [{ type: 'terms_of_service', url: 'https://shop.example/terms' }],
  expires_at: new Date().toISOString(),
};
const body = JSON.stringify(checkout);
const N = 5000;

async function time(what: string, f: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 200; i++) await f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await f();
  const us = Number(process.hrtime.bigint() - t) / 1000 / N;
  const grown: number[] = [];
  for (let b = 0; b < 9; b++) {
    const h0 = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50; i++) await f();
    const h1 = process.memoryUsage().heapUsed;
    if (h1 > h0) grown.push((h1 - h0) / 50);
  }
  grown.sort((a, b) => a - b);
  const kb = grown.length ? `${((grown[grown.length >> 1] ?? 0) / 1024).toFixed(1)} kB` : 'n/a';
  console.log(`${what}: ${us.toFixed(1)} µs, ${kb} allocated a call`);
}

const signed = {
  ...checkout,
  ap2: { merchant_authorization: await signMerchantAuthorization(checkout, await ucpSigningKey(config)) },
};
const platform = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const jwk: Record<string, unknown> = { ...platform.export({ format: 'jwk' }), kid: 'p1', alg: 'ES256' };
const { d: _d, ...publicJwk } = jwk;
const sdjwt = new SDJwtVcInstance({
  hasher: digest,
  saltGenerator: (n) => randomBytes(n).toString('base64url'),
  signer: await ES256.getSigner(jwk),
  signAlg: 'ES256',
  kbSigner: await ES256.getSigner(jwk),
  kbSignAlg: 'ES256',
});
const now = Math.floor(Date.now() / 1000);
const mandate = await sdjwt.present(
  await sdjwt.issue(
    { iat: now, vct: 'mandate.checkout.1', cnf: { jwk: publicJwk }, checkout: signed },
    { _sd: ['checkout'] },
    { header: { kid: 'p1' } },
  ),
  { checkout: true },
  { kb: { payload: { iat: now, aud: 'https://shop.example/.well-known/ucp', nonce: String(checkout.id) } } },
);

console.log(`checkout body ${body.length} B, mandate ${mandate.length} B, ${N} iterations each`);
await time('key ring lookup (stat)', () => ucpSigningKey(config));
const response = (key: Awaited<ReturnType<typeof ucpSigningKey>>) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body,
  privateKey: key.key,
  keyid: key.kid,
  components: ['@status', 'content-digest', 'content-type'],
  params: ['created', 'keyid'],
});
await time('response signature (Content-Digest + RFC 9421), with the lookup', async () =>
  signHttpResponse(response(await ucpSigningKey(config))),
);
await time("the same through http-message-signatures (before issue 50's allocation pass)", async () =>
  signHttpResponseWithLibrary(response(await ucpSigningKey(config))),
);
await time('merchant_authorization (JCS + ES256), with the lookup', async () =>
  signMerchantAuthorization(checkout, await ucpSigningKey(config)),
);
await time('completion: mandate (SD-JWT+kb) and our signature inside it verified', async () => {
  const m = await verifyCheckoutMandate(mandate, {
    issuerKeys: [publicJwk],
    audience: 'https://shop.example/.well-known/ucp',
    nonce: String(checkout.id),
    nowS: now,
  });
  if (!m.ok) throw new Error(m.reason);
  const v = await verifyMerchantAuthorization(m.checkout, await ucpPublicJwks(config));
  if (!v.ok) throw new Error(v.reason);
});
await time('idempotency fingerprint of the completion body (mandate included)', async () =>
  bodyFingerprint({
    payment: { instruments: [{ id: 'po_1', handler_id: 'purchase_order' }] },
    ap2: { checkout_mandate: mandate },
  }),
);

import { createHmac } from 'node:crypto';
import type { ClaimedDelivery } from './types.ts';

/**
 * ACP's webhook signature (openapi.agentic_checkout_webhook.yaml, 2026-04-17; "aligned with
 * Stripe's webhook signature scheme"): `Merchant-Signature: t=<unix seconds>,v1=<64 hex>`, the
 * hex HMAC-SHA256 of `<t>.<raw body>`. The HMAC key is the shared secret exactly as the
 * operator received it from setCheckoutWebhook (`whsec_…`, its UTF-8 bytes, prefix included),
 * as Stripe uses its `whsec_` secrets: the spec says only "shared secret", and this is what a
 * platform reading it will do. Pure.
 */
export function merchantSignature(secret: string, body: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/**
 * The headers of one ACP attempt. One `v1` only: the spec's header pattern
 * (`^t=\d+,v1=[a-fA-F0-9]{64}$`) has room for one signature, so a new secret replaces the old
 * at once. `Request-Id` is the event id, the same on every attempt and replay (a platform can
 * drop duplicates by it); `Timestamp` is the attempt's time (both optional in the spec).
 */
export function acpHeaders(
  d: Pick<ClaimedDelivery, 'eventId' | 'payload' | 'secrets'>,
  now: Date,
): Record<string, string> {
  const secret = d.secrets[0];
  if (!secret) throw new Error('the endpoint has no signing secret');
  return {
    'content-type': 'application/json',
    'merchant-signature': merchantSignature(secret, d.payload, now),
    'request-id': d.eventId,
    timestamp: now.toISOString(),
  };
}

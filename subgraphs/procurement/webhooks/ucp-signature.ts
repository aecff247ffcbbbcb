import type { KeyObject } from 'node:crypto';
import { signHttpMessage } from '../../../lib/http-signature/sign.ts';
import type { ClaimedDelivery } from './types.ts';

/**
 * The headers of one UCP order webhook attempt (order.md, "Order Event Webhook" and "Webhook
 * Signature Verification"; signatures.md, "REST Request Signing"):
 *
 * - `Webhook-Id`: the order event's id (a UUID), the same on every attempt and replay, so a
 *   platform drops duplicates by it (Standard Webhooks);
 * - `Idempotency-Key`: the same event id. signatures.md's table requires `idempotency-key` among
 *   the covered components of every signed POST, and order.md names only `Webhook-Id`: both are
 *   sent and signed, so a receiver written to either convention dedupes (issue 50, docs/ucp.md);
 * - `Webhook-Timestamp`: when the event occurred, in Unix seconds. The tag says "Event occurrence
 *   timestamp" (order.md, rest.openapi.json), so it is the event's time on every attempt, not
 *   the attempt's (Standard Webhooks' own HMAC scheme uses the attempt's; UCP signs with RFC 9421
 *   instead, whose `created` is the attempt's time);
 * - `UCP-Agent: profile="<business profile>"`: the signer, whose `signing_keys` hold the key;
 * - `Content-Digest: sha-256=:…:` (RFC 9530) of the exact body bytes;
 * - `Signature-Input`/`Signature` (label `sig1`, ES256 as raw r||s), covering `@method`,
 *   `@authority`, `@path` (`@query` when the URL has one), `ucp-agent`, `idempotency-key`, `webhook-id`,
 *   `webhook-timestamp`, `content-digest` and `content-type`, with `created` (the attempt) and
 *   `keyid` (the key's kid); no `alg` (signatures.md: derived from the JWK's curve).
 */

export interface UcpSigner {
  /** The business profile's URL (`<origin>/.well-known/ucp`). */
  readonly profileUrl: string;
  /** The key that signs now (the key ring's active one; opened on first use). */
  signingKey(): Promise<{ readonly kid: string; readonly key: KeyObject }>;
}

/** The components a UCP order webhook's signature covers, in order. */
export function ucpWebhookComponents(url: string): string[] {
  return [
    '@method',
    '@authority',
    '@path',
    ...(new URL(url).search ? ['@query'] : []),
    'ucp-agent',
    'idempotency-key',
    'webhook-id',
    'webhook-timestamp',
    'content-digest',
    'content-type',
  ];
}

/** `UCP-Agent` as an RFC 8941 dictionary with the one `profile` string member. */
export const ucpAgentHeader = (profileUrl: string): string =>
  `profile="${profileUrl.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** When the event of a stored UCP body occurred (its `created_time`), in Unix seconds. */
function occurredAt(payload: string, fallback: Date): number {
  try {
    const t = Date.parse((JSON.parse(payload) as { created_time?: string }).created_time ?? '');
    if (Number.isFinite(t)) return Math.floor(t / 1000);
  } catch {}
  return Math.floor(fallback.getTime() / 1000);
}

export async function ucpHeaders(
  d: Pick<ClaimedDelivery, 'eventId' | 'payload' | 'url' | 'createdAt'>,
  signer: UcpSigner,
  now: Date,
): Promise<Record<string, string>> {
  const { kid, key } = await signer.signingKey();
  return signHttpMessage({
    url: d.url,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'ucp-agent': ucpAgentHeader(signer.profileUrl),
      'idempotency-key': d.eventId,
      'webhook-id': d.eventId,
      'webhook-timestamp': String(occurredAt(d.payload, d.createdAt)),
    },
    body: d.payload,
    privateKey: key,
    keyid: kid,
    components: ucpWebhookComponents(d.url),
    params: ['created', 'keyid'],
    paramValues: { created: now },
  });
}

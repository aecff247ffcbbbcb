/**
 * An ACP platform's side of the order webhooks, written from the specification alone
 * (openapi.agentic_checkout_webhook.yaml, 2026-04-17), never from the sender's code: the
 * signature check a platform runs, and the webhook's OpenAPI event schema compiled as published.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import {
  type CheckoutSession,
  createSession,
  newSessionId,
  orderIdOfSession,
  type SessionLine,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { OrderEventData } from '../../../subgraphs/procurement/outbox/order-events.ts';

const HEADER = /^t=(\d+),v1=([a-fA-F0-9]{64})$/;

/**
 * A platform's check of `Merchant-Signature: t=<unix seconds>,v1=<hex>`: the HMAC-SHA256 of
 * `<t>.<raw body>` with the shared secret (its UTF-8 bytes, as Stripe-style secrets are used),
 * compared in constant time, `t` within the recommended 300 seconds of now.
 */
export function verifyMerchantSignature(
  header: string | string[] | undefined,
  rawBody: string,
  secret: string,
  nowMs = Date.now(),
  toleranceS = 300,
): boolean {
  const m = typeof header === 'string' ? HEADER.exec(header) : null;
  if (!m) return false;
  const [, t, v1] = m as unknown as [string, string, string];
  if (Math.abs(nowMs / 1000 - Number(t)) > toleranceS) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const OPENAPI = new URL('../../../schemas/acp/2026-04-17/openapi/', import.meta.url);
const load = (file: string) => parse(readFileSync(new URL(file, OPENAPI), 'utf8')) as Record<string, unknown>;

let compiled: ((body: unknown) => string[]) | undefined;

/**
 * The webhook OpenAPI's `WebhookEvent` as published ({type, data: EventDataOrder}, the data
 * being the checkout OpenAPI's Order by a cross-file $ref), compiled with Ajv 2020-12. Not
 * strict: the documents carry OpenAPI's `example` and `nullable`. Returns the violations.
 */
export function webhookEventViolations(body: unknown): string[] {
  if (!compiled) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    const base = 'https://acp.example/openapi/';
    ajv.addSchema({ $id: `${base}openapi.agentic_checkout.yaml`, ...load('openapi.agentic_checkout.yaml') });
    ajv.addSchema({
      $id: `${base}openapi.agentic_checkout_webhook.yaml`,
      ...load('openapi.agentic_checkout_webhook.yaml'),
    });
    const validate = ajv.getSchema(
      `${base}openapi.agentic_checkout_webhook.yaml#/components/schemas/WebhookEvent`,
    );
    if (!validate) throw new Error('WebhookEvent not found in the webhook OpenAPI document');
    compiled = (b) =>
      validate(b)
        ? []
        : (validate.errors ?? []).map(
            (e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
          );
  }
  return compiled(body);
}

/** Cents as the order events' exact decimal text (`5247` → `"52.47"`). */
export const cents = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;

/** Two priced lines of a session (its item 1 could not be priced). */
export const LINES: SessionLine[] = [
  {
    item: 0,
    sku: 'SKU-ABC-000001',
    name: 'Widget',
    quantity: 2,
    unitCents: 1250,
    baseCents: 2500,
    discountCents: 250,
    totalCents: 2250,
  },
  // The session's item 1 could not be priced: its second line is item 2.
  {
    item: 2,
    sku: 'SKU-ELC-000004',
    name: 'Cable',
    quantity: 3,
    unitCents: 999,
    baseCents: 2997,
    discountCents: 0,
    totalCents: 2997,
  },
];

/** A session of `keyId` being completed (complete_in_progress, its order id and PO number set), as the checkout service stores it. */
export function sessionOf(
  keyId: string | null,
  lines: SessionLine[] = LINES,
  owner = 'spiffe://example.org/ns/ai/sa/procurement-agent/acp-hooks',
): CheckoutSession {
  const base = lines.reduce((n, l) => n + l.baseCents, 0);
  const discount = lines.reduce((n, l) => n + l.discountCents, 0);
  const id = newSessionId();
  const s = createSession(
    {
      id,
      protocol: 'acp',
      owner,
      agentId: 'agent-acp-hooks-01',
      keyId,
      currency: 'USD',
      region: 'US',
      items: lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
      codes: [],
      extensions: [],
      buyer: null,
      fulfillment: null,
      ttlMs: 3_600_000,
    },
    {
      lines,
      discounts: [],
      rejected: [],
      problems: [],
      totals: {
        baseCents: base,
        discountCents: discount,
        subtotalCents: base - discount,
        totalCents: base - discount,
      },
      quote: null,
    },
    Date.now(),
  );
  return {
    ...s,
    status: 'complete_in_progress',
    orderId: orderIdOfSession(id),
    purchaseOrderNumber: 'PO-2026-0042',
  };
}

/** The order event data of a session's order, as the outbox writes it. */
export function dataOf(s: CheckoutSession, status = 'APPROVED'): OrderEventData {
  return {
    order_id: s.orderId as string,
    status: status as OrderEventData['status'],
    spiffe_id: s.owner,
    agent_id: s.agentId,
    sku: s.lines[0]?.sku as string,
    quantity: s.lines.reduce((n, l) => n + l.quantity, 0),
    allocated_budget: cents(s.totals.totalCents) as OrderEventData['allocated_budget'],
    processed_at: Date.now() / 1000,
    cancelled_at: null,
    lines: s.lines.map((l) => ({
      sku: l.sku,
      quantity: l.quantity,
      unit_price: cents(l.unitCents),
      discount: cents(l.discountCents),
      line_total: cents(l.totalCents),
    })),
    total: cents(s.totals.totalCents),
    checkout_session_id: s.id,
  };
}

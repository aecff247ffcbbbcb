/**
 * docs/webhooks.md's list of event types is written from the event schemas (ci/webhook-events.ts)
 * and must agree with them and with what registerWebhookEndpoint accepts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WEBHOOKS_DOC, webhookEventSchemas, withFreshBlock } from '../../ci/webhook-events.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { WEBHOOK_EVENT_TYPES } from '../../subgraphs/procurement/webhooks/service.ts';

const doc = readFileSync(WEBHOOKS_DOC, 'utf8');
const schemaTypes = webhookEventSchemas().flatMap((s) => s.types);

describe('the webhook event types', () => {
  it('in docs/webhooks.md are the block the schemas give (npm run docs:webhook-events)', () => {
    expect(doc).toBe(withFreshBlock(doc));
    for (const t of schemaTypes) expect(doc).toContain(`\`${t}\``);
  });

  it('of the schemas are exactly those an endpoint may subscribe to', () => {
    expect([...schemaTypes].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it('include the approval events next to OrderPlaced and OrderCancelled', () => {
    for (const t of [
      EventTypes.OrderPlaced,
      EventTypes.OrderCancelled,
      EventTypes.OrderApprovalRequested,
      EventTypes.OrderApproved,
      EventTypes.OrderRejected,
      EventTypes.OrderExpired,
    ])
      expect(schemaTypes).toContain(t);
  });

  it('would notice a hand-edited list: a row removed from the block is written back', () => {
    const edited = doc.replace(/^\| `com\.agent-commerce\.procurement\.OrderCancelled`.*\n/m, '');
    expect(edited).not.toBe(doc);
    expect(withFreshBlock(edited)).toBe(doc);
  });
});

/**
 * The idempotency fingerprint's canonical JSON (gateway/agent/acp/idempotency.ts, shared by ACP,
 * UCP and the order route) is now lib/ap2/canonical.ts's JCS. Records kept in the store carry
 * fingerprints made by the recursion it replaced, and a create's session id is derived from its
 * fingerprint (sessionIdOfRecord): over any parsed JSON body the text, so the fingerprint and
 * the id, must stay what they were, or a retry across an upgrade would be refused (another
 * body) or make a second session.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyFingerprint, canonicalJson, sessionIdOfRecord } from '../../gateway/agent/acp/idempotency.ts';
import { anyJson } from '../support/json-arbitrary.ts';

/** The recursion the fingerprint was made with until issue 50's allocation pass, verbatim. */
function previous(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(previous).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${previous((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('idempotency fingerprint', () => {
  it('writes every parsed JSON body as before (any Unicode, index-like member names)', () => {
    const json = anyJson(['10', '9', 'a', '\uD800', '__proto__', '']);
    fc.assert(
      fc.property(json, (v) => {
        // A body as the server holds it: parsed from the bytes sent.
        const body = JSON.parse(JSON.stringify(v)) as unknown;
        expect(canonicalJson(body)).toBe(previous(body));
      }),
      { numRuns: 500 },
    );
  });

  it('gives a known body the fingerprint and session id it had', () => {
    const body = { line_items: [{ item: { id: 'SKU-1' }, quantity: 2 }], buyer: { email: 'a@b.example' } };
    const fingerprint = bodyFingerprint(body);
    expect(fingerprint).toBe(createHash('sha256').update(previous(body)).digest('base64url'));
    expect(sessionIdOfRecord({ key: 'k', fingerprint })).toMatch(/^cs_[0-9a-f]{32}$/);
    expect(bodyFingerprint(undefined)).toBe(bodyFingerprint(null));
  });
});

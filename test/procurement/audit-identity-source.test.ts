/**
 * The audit entry's identity source (issue 12) is part of the keyed link when present, and
 * absent from it otherwise, so chains written before it verify unchanged.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  chain,
  GENESIS_HASH,
  linkHash,
  verifyEntries,
} from '../../gateway/agent/audit/entry.ts';

const key = { kid: 'k1', secret: randomBytes(32) };
const keyOf = (kid: string) => (kid === key.kid ? key.secret : undefined);
const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  at: Date.UTC(2026, 0, 1),
  traceId: 't',
  method: 'POST',
  path: '/api/v2/procurement/orders',
  status: 201,
  durationMs: 1.5,
  identity: 'spiffe://example.org/ns/ai/sa/procurement-agent',
  reason: 'ok',
  ...over,
});

describe('the audit identity source', () => {
  it('keeps the link of an entry without a source as it was before the field existed', () => {
    const before = linkHash(1, GENESIS_HASH, entry(), key);
    expect(linkHash(1, GENESIS_HASH, entry({ identitySource: null }), key)).toBe(before);
    expect(linkHash(1, GENESIS_HASH, entry({ identitySource: 'signature' }), key)).not.toBe(before);
  });

  it('verifies a chain mixing entries with and without a source, and detects a changed source', () => {
    const chained = chain(
      { seq: 0, hash: GENESIS_HASH },
      [entry(), entry({ identitySource: 'signature' }), entry({ identitySource: 'mtls+signature' })],
      key,
    );
    expect(verifyEntries(chained, { keyOf })).toEqual({ ok: true, entries: 3 });
    const forged = chained.map((e) => (e.seq === 2 ? { ...e, identitySource: 'mtls' } : e));
    expect(verifyEntries(forged, { keyOf })).toMatchObject({ ok: false, seq: 2, kind: 'altered' });
  });
});

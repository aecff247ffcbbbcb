/**
 * The agent gateway's shared steps on the UCP REST routes (embedded system): the block (more than
 * 5 contract errors in a row) and the rate limit answer 429 as UCP errors with Retry-After, and
 * every UCP call, answered or refused, is one audit entry of the key's identity (api-key). A
 * bucket of 8 that does not refill during the test makes the count exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { FIXTURE } from './checkout.suite.ts';

const CAPACITY = 8;

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let platforms = 0;

beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    RATE_LIMIT_CAPACITY: String(CAPACITY),
    RATE_LIMIT_REFILL_PER_SECOND: '0.0001',
  });
  profiles = await startProfileServer();
  profileUrl = profiles.set('/platform.json', platformProfile());
}, 120_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

/** A platform of its own: its identity, key, block and bucket. */
async function platform() {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-steps-${++platforms}-${process.pid}`;
  const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
  const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
    ucpCall(sys.url, { key, profileUrl }, method, path, body);
  return { spiffeId, call };
}

const create = { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] };

type Row = { method: string; path: string; status: number; identity_source: string; reason: string | null };

/** The identity's audit entries, waiting (up to 2 s) until `n` are written. */
async function auditOf(identity: string, n: number): Promise<Row[]> {
  let rows: Row[] = [];
  for (let i = 0; i < 200 && rows.length < n; i++) {
    rows = await sys.platform.db.query<Row>(
      'SELECT method, path, status, identity_source, reason FROM agent_audit_log WHERE identity = $1 ORDER BY seq',
      [identity],
    );
    if (rows.length < n) await new Promise((r) => setTimeout(r, 10));
  }
  return rows;
}

describe('agent gateway steps on the UCP routes', () => {
  it('audits each UCP call once, as the key’s identity proven by api-key', async () => {
    const p = await platform();
    const c = await p.call('POST', '/checkout-sessions', create);
    expect(c.status).toBe(201);
    const id = c.body.id as string;
    expect((await p.call('GET', `/checkout-sessions/${id}`)).status).toBe(200);
    const rows = await auditOf(p.spiffeId, 2);
    expect(rows.map(({ reason: _r, ...row }) => row)).toEqual([
      { method: 'POST', path: '/ucp/checkout-sessions', status: 201, identity_source: 'api-key' },
      { method: 'GET', path: '/ucp/checkout-sessions/:id', status: 200, identity_source: 'api-key' },
    ]);
  });

  it('answers 429 rate_limited with Retry-After once the identity’s bucket is empty, and audits it', async () => {
    const p = await platform();
    const c = await p.call('POST', '/checkout-sessions', create);
    expect(c.status).toBe(201);
    const path = `/checkout-sessions/${c.body.id as string}`;
    for (let i = 1; i < CAPACITY; i++) expect((await p.call('GET', path)).status).toBe(200);
    const limited = await p.call('GET', path);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(typeof limited.body.content).toBe('string');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    const rows = await auditOf(p.spiffeId, CAPACITY + 1);
    expect(rows.at(-1)).toMatchObject({ path: '/ucp/checkout-sessions/:id', status: 429 });
  });

  it('blocks an identity after more than 5 contract errors in a row: 429 agent_blocked, even for a valid call', async () => {
    const p = await platform();
    // line_items must be an array (the operation's view of the vendored schema): a contract error.
    for (let i = 0; i < 6; i++) {
      const r = await p.call('POST', '/checkout-sessions', { line_items: 'not a list' });
      expect(r.status).toBe(400);
    }
    const blocked = await p.call('POST', '/checkout-sessions', create);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('agent_blocked');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    const rows = await auditOf(p.spiffeId, 7);
    expect(rows.at(-1)).toMatchObject({ path: '/ucp/checkout-sessions', status: 429 });
    expect(rows.at(-1)?.reason).toMatch(/^blocked/);
  });
});

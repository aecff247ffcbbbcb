/**
 * The agent purchase gateway end to end over real HTTP against the embedded system (`npm
 * start` in a test), table-driven: identity, scope, parse, contract, block, rate limit,
 * idempotency, order domain, audit. Each case uses its own sub-identity of the agent (own
 * bucket, own block count) unless it tests those. Time is a ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { ProcurementModule } from '../../subgraphs/procurement/index.ts';
import {
  AGENT,
  accessToken,
  EDGE_ORDERS,
  freshAgent,
  ORDERS,
  post,
  type Reply,
  validOrder,
} from './support/agent.ts';
import { type FaultyDb, faultyDb } from './support/faulty-db.ts';

const READ_ONLY = `${AGENT}/read-only`;
const clock = new ManualClock(Date.now());
let sys: TestSystem;
let db: FaultyDb;

const placed = () => (sys.local.procurement as ProcurementModule).api.placed();
const auditFor = async (traceId: string) => {
  await sys.platform.db.query('SELECT 1');
  const rows = await sys.platform.db.query<{
    status: number;
    reason: string;
    identity: string | null;
    duration_ms: number;
  }>('SELECT status, reason, identity, duration_ms FROM agent_audit_log WHERE trace_id = $1 ORDER BY seq', [
    traceId,
  ]);
  return rows;
};
const waitForAudit = async (traceId: string) => {
  for (let i = 0; i < 100; i++) {
    const rows = await auditFor(traceId);
    if (rows.length > 0) return rows;
    await new Promise((r) => setTimeout(r, 10));
  }
  return [];
};
const expectProblem = (r: Reply, status: number, type?: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.json.status).toBe(status);
  expect(typeof r.json.title).toBe('string');
  expect(typeof r.json.detail).toBe('string');
  if (type) expect(String(r.json.type)).toMatch(new RegExp(`/${type}$`));
};

beforeAll(async () => {
  db = await faultyDb();
  sys = await startEmbedded(
    {
      AGENT_SCOPE_POLICY: JSON.stringify({ [AGENT]: ['orders:create', 'orders:read'], [READ_ONLY]: [] }),
    },
    { clock, db },
  );
});
afterAll(async () => {
  await sys.close();
  await db.close();
});

describe('1. identity (401)', () => {
  const long = `${AGENT}/${'a'.repeat(2100)}`;
  it.each([
    ['missing', null],
    ['empty', ''],
    ['another scheme', 'https://example.org/ns/ai/sa/procurement-agent'],
    ['another trust domain', 'spiffe://evil.org/ns/ai/sa/procurement-agent'],
    ['a look-alike trust domain', 'spiffe://example.org.evil.org/ns/ai/sa/procurement-agent'],
    ['an upper-case trust domain', 'spiffe://EXAMPLE.org/ns/ai/sa/procurement-agent'],
    ['procurement-agent-evil', `${AGENT}-evil`],
    ['another workload', 'spiffe://example.org/ns/ai/sa/pricing-agent'],
    ['a parent path', 'spiffe://example.org/ns/ai/sa'],
    ['a query', `${AGENT}?admin=true`],
    ['a fragment', `${AGENT}#x`],
    ['.. segments', 'spiffe://example.org/ns/ai/sa/other/../procurement-agent'],
    ['a . segment', 'spiffe://example.org/ns/ai/./sa/procurement-agent'],
    ['a trailing slash', `${AGENT}/`],
    ['percent-encoding', 'spiffe://example.org/ns/ai/sa/procurement%2Dagent'],
    ['a port', 'spiffe://example.org:8443/ns/ai/sa/procurement-agent'],
    ['over-long (more than 2048 bytes)', long],
  ])('refuses %s', async (_name, spiffe) => {
    const traceId = `t401-${Math.random().toString(36).slice(2)}`;
    const before = placed();
    const r = await post(sys.url, { spiffe, headers: { 'x-trace-id': traceId } });
    expectProblem(r, 401, 'unverified-workload-identity');
    expect(String(r.json.detail)).toMatch(/^The AI workload identity is not verified/);
    expect(r.headers['x-trace-id']).toBe(traceId);
    expect(placed()).toBe(before);
    const audit = await waitForAudit(traceId);
    expect(audit).toHaveLength(1);
    expect(audit[0]?.status).toBe(401);
    expect(audit[0]?.identity).toBeNull();
    expect(audit[0]?.reason).toMatch(/^identity: /);
  });

  it('refuses the header sent twice', async () => {
    const r = await post(sys.url, { spiffe: null, headers: ['x-spiffe-id', AGENT, 'x-spiffe-id', AGENT] });
    expectProblem(r, 401);
  });

  it('refuses the header from a peer that is not a trusted proxy', async () => {
    const r = await sys.app.inject({
      method: 'POST',
      url: ORDERS,
      remoteAddress: '203.0.113.9',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
      payload: JSON.stringify(validOrder()),
    });
    expect(r.statusCode).toBe(401);
    expect(r.json().detail).toContain('not a trusted proxy');
  });

  it('checks identity before the body: garbage from an unknown caller is a 401', async () => {
    const r = await post(sys.url, { spiffe: null, body: '{{{', headers: { 'content-type': 'text/plain' } });
    expectProblem(r, 401);
  });
});

describe('2. scope (403) and bearer tokens', () => {
  const sub = () => freshAgent('scope');
  it('succeeds with only a valid X-Spiffe-Id and a valid body', async () => {
    const r = await post(sys.url, { spiffe: sub() });
    expect(r.status, r.text).toBe(201);
  });

  it('refuses an identity the policy grants nothing with insufficient_scope', async () => {
    const r = await post(sys.url, { spiffe: READ_ONLY });
    expectProblem(r, 403, 'insufficient_scope');
    expect(r.headers['www-authenticate']).toContain('insufficient_scope');
  });

  type TokenCase = [string, (id: string) => Promise<string> | string, number];
  const cases: TokenCase[] = [
    [
      'a token with the scope and sub = SPIFFE ID',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:create' }),
      201,
    ],
    [
      'a token whose scope lacks orders:create',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:read' }),
      403,
    ],
    ['a token without scope', (id) => accessToken(sys.config, { sub: id }), 403],
    [
      'a token for another subject',
      () => accessToken(sys.config, { sub: AGENT, scope: 'orders:create' }),
      401,
    ],
    [
      'a token of another audience',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:create', aud: 'other' }),
      401,
    ],
    [
      'a token of another issuer',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:create', iss: 'https://evil' }),
      401,
    ],
    [
      'a plain JWT (typ JWT, not at+jwt)',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:create' }, { typ: 'JWT' }),
      401,
    ],
    [
      'a token without client_id',
      (id) => accessToken(sys.config, { sub: id, scope: 'orders:create', client_id: undefined }),
      401,
    ],
    [
      'an expired token',
      (id) =>
        accessToken(
          sys.config,
          { sub: id, scope: 'orders:create' },
          { ttl: Math.floor(clock.now() / 1000) - 60 },
        ),
      401,
    ],
    [
      'a tampered token',
      async (id) => `${await accessToken(sys.config, { sub: id, scope: 'orders:create' })}x`,
      401,
    ],
    ['an unsigned token', () => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 401],
  ];
  it.each(cases)('%s → %i', async (_name, token, status) => {
    const id = sub();
    const before = placed();
    const r = await post(sys.url, { spiffe: id, headers: { authorization: `Bearer ${await token(id)}` } });
    expect(r.status, r.text).toBe(status);
    if (status !== 201) expect(placed()).toBe(before);
    if (status === 401) expect(String(r.json.detail)).toMatch(/AI workload identity is not verified/);
  });

  it('refuses another Authorization scheme', async () => {
    const r = await post(sys.url, { spiffe: sub(), headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expectProblem(r, 401);
  });

  it('a token cannot widen the grant of the policy', async () => {
    const token = await accessToken(sys.config, { sub: READ_ONLY, scope: 'orders:create' });
    const r = await post(sys.url, { spiffe: READ_ONLY, headers: { authorization: `Bearer ${token}` } });
    expectProblem(r, 403, 'insufficient_scope');
  });
});

describe('5. media type, size, JSON (415 / 413 / 400)', () => {
  const big = JSON.stringify(validOrder({ agent_id: 'agent-0000001' })).replace('{', `{${' '.repeat(5000)}`);
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, JSON.stringify(validOrder()), 415],
    ['no content type', { 'content-type': '' }, JSON.stringify(validOrder()), 415],
    [
      'application/x-www-form-urlencoded',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'a=1',
      415,
    ],
    ['a +json type', { 'content-type': 'application/merge-patch+json' }, JSON.stringify(validOrder()), 415],
    [
      'another charset',
      { 'content-type': 'application/json; charset=iso-8859-1' },
      JSON.stringify(validOrder()),
      415,
    ],
    ['a body over 4096 bytes', {}, big, 413],
    ['malformed JSON', {}, '{"agent_id": "agent-0000001",', 400],
    ['an empty body', {}, '', 400],
    ['trailing data', {}, `${JSON.stringify(validOrder())} {}`, 400],
    [
      'duplicate keys',
      {},
      '{"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":1,"quantity":100,"max_budget_usd":5}',
      400,
    ],
    [
      'a __proto__ key',
      {},
      '{"__proto__":{"admin":true},"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":1,"max_budget_usd":5}',
      400,
    ],
    ['an escaped __proto__ key', {}, '{"\\u005f_proto__":{},"agent_id":"agent-0000001"}', 400],
    ['a constructor key', {}, '{"constructor":{"prototype":{}},"agent_id":"agent-0000001"}', 400],
    ['nesting 40 deep', {}, `${'['.repeat(40)}${']'.repeat(40)}`, 400],
    ['NaN', {}, '{"quantity": NaN}', 400],
    ['single quotes', {}, "{'agent_id': 'x'}", 400],
    // Lone surrogates, which no Unicode text holds (I-JSON, RFC 7493): refused before any step
    // stores them (an agent_id of any other string is the contract's: this one was placed).
    ['a lone surrogate in agent_id', {}, JSON.stringify(validOrder({ agent_id: 'agent-\ud800-00001' })), 400],
    // Reasons the audit keeps, cut where a pair straddles the cut: the chain check at the end
    // of this file fails if either is stored other than as it was hashed.
    [
      'a lone surrogate after a 1,006-character member name ending in a pair',
      {},
      `{"${'a'.repeat(1006)}\u{1F600}":"\\ud800"}`,
      400,
    ],
    [
      'a duplicate 63-character member name ending in a pair',
      {},
      `{"${'a'.repeat(63)}\u{1F600}":1,"${'a'.repeat(63)}\u{1F600}":2}`,
      400,
    ],
  ])('%s → %i', async (_name, headers, body, status) => {
    const before = placed();
    const r = await post(sys.url, {
      spiffe: freshAgent('parse'),
      headers: headers as Record<string, string>,
      body,
    });
    expectProblem(r, status);
    expect(placed()).toBe(before);
  });

  it('413 also for a chunked body without Content-Length', async () => {
    const { request } = await import('undici');
    const { Readable } = await import('node:stream');
    const chunks = Readable.from(
      (async function* () {
        for (let i = 0; i < 10; i++) yield Buffer.from(' '.repeat(1000));
        yield Buffer.from(JSON.stringify(validOrder()));
      })(),
    );
    const res = await request(`${sys.url}${ORDERS}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-spiffe-id': freshAgent('chunked') },
      body: chunks,
    });
    expect(res.statusCode).toBe(413);
    await res.body.dump();
  });

  it('refuses invalid UTF-8 with 400', async () => {
    const body = Buffer.concat([
      Buffer.from('{"agent_id":"agent-00000'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ]);
    const r = await post(sys.url, { spiffe: freshAgent('utf8'), body });
    expectProblem(r, 400);
  });

  it('accepts application/json with charset=utf-8', async () => {
    const r = await post(sys.url, {
      spiffe: freshAgent('charset'),
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(r.status).toBe(201);
  });
});

describe('6. contract (422)', () => {
  const s65 = 'a'.repeat(65);
  type Case = [string, Record<string, unknown> | unknown, string[]];
  const without = (k: string) => {
    const o: Record<string, unknown> = validOrder();
    delete o[k];
    return o;
  };
  const invalid: Case[] = [
    ['agent_id of 9 characters', validOrder({ agent_id: 'a'.repeat(9) }), ['/agent_id']],
    ['agent_id of 65 characters', validOrder({ agent_id: s65 }), ['/agent_id']],
    ['agent_id a number', validOrder({ agent_id: 1234567890 }), ['/agent_id']],
    ['agent_id null', validOrder({ agent_id: null }), ['/agent_id']],
    ['sku lower case', validOrder({ sku: 'sku-abc-123456' }), ['/sku']],
    ['sku with a trailing newline', validOrder({ sku: 'SKU-ABC-123456\n' }), ['/sku']],
    ['sku with a leading space', validOrder({ sku: ' SKU-ABC-123456' }), ['/sku']],
    ['sku with 5 digits', validOrder({ sku: 'SKU-ABC-12345' }), ['/sku']],
    ['sku with 7 digits', validOrder({ sku: 'SKU-ABC-1234567' }), ['/sku']],
    ['sku with 4 letters', validOrder({ sku: 'SKU-ABCD-123456' }), ['/sku']],
    ['sku with Arabic-Indic digits', validOrder({ sku: 'SKU-ABC-١٢٣٤٥٦' }), ['/sku']],
    ['sku a number', validOrder({ sku: 123456 }), ['/sku']],
    ['quantity 0', validOrder({ quantity: 0 }), ['/quantity']],
    ['quantity 101', validOrder({ quantity: 101 }), ['/quantity']],
    ['quantity -1', validOrder({ quantity: -1 }), ['/quantity']],
    ['quantity 1.5', validOrder({ quantity: 1.5 }), ['/quantity']],
    ['quantity "5" (no coercion)', validOrder({ quantity: '5' }), ['/quantity']],
    ['quantity true', validOrder({ quantity: true }), ['/quantity']],
    ['quantity null', validOrder({ quantity: null }), ['/quantity']],
    ['quantity an array', validOrder({ quantity: [5] }), ['/quantity']],
    ['max_budget_usd 0', validOrder({ max_budget_usd: 0 }), ['/max_budget_usd']],
    ['max_budget_usd negative', validOrder({ max_budget_usd: -0.01 }), ['/max_budget_usd']],
    ['max_budget_usd 5000.01', validOrder({ max_budget_usd: 5000.01 }), ['/max_budget_usd']],
    ['max_budget_usd "100" (no coercion)', validOrder({ max_budget_usd: '100' }), ['/max_budget_usd']],
    ['max_budget_usd an object', validOrder({ max_budget_usd: { amount: 1 } }), ['/max_budget_usd']],
    ['an unknown field', validOrder({ priority: 'high' }), ['/priority']],
    ['an unknown field with a slash', validOrder({ 'a/b~c': 1 }), ['/a~1b~0c']],
    ['missing agent_id', without('agent_id'), ['/agent_id']],
    ['missing sku', without('sku'), ['/sku']],
    ['missing quantity', without('quantity'), ['/quantity']],
    ['missing max_budget_usd', without('max_budget_usd'), ['/max_budget_usd']],
    ['an empty object', {}, ['/agent_id', '/sku', '/quantity', '/max_budget_usd']],
    [
      'every field wrong',
      { agent_id: 1, sku: 2, quantity: '3', max_budget_usd: '4', x: 5 },
      ['/x', '/agent_id', '/sku', '/quantity', '/max_budget_usd'],
    ],
    ['an array', [validOrder()], ['']],
    ['a string', 'order', ['']],
    ['null', null, ['']],
  ];
  it.each(invalid)('refuses %s with one error per violation', async (_name, body, pointers) => {
    const before = placed();
    const r = await post(sys.url, { spiffe: freshAgent('contract'), body: JSON.stringify(body) });
    expectProblem(r, 422, 'contract-violation');
    const errors = r.json.errors as { pointer: string; message: string }[];
    expect(errors.map((e) => e.pointer).sort()).toEqual([...pointers].sort());
    for (const e of errors) expect(e.message.length).toBeGreaterThan(0);
    expect(placed()).toBe(before);
  });

  const valid: [string, Record<string, unknown>][] = [
    ['agent_id of 10 characters', validOrder({ agent_id: 'a'.repeat(10) })],
    ['agent_id of 64 characters', validOrder({ agent_id: 'a'.repeat(64) })],
    ['quantity 1', validOrder({ quantity: 1 })],
    ['quantity 100', validOrder({ quantity: 100 })],
    ['max_budget_usd 5000.0', validOrder({ max_budget_usd: 5000 })],
    ['max_budget_usd 0.01', validOrder({ max_budget_usd: 0.01 })],
  ];
  it.each(valid)('accepts %s', async (_name, body) => {
    const r = await post(sys.url, { spiffe: freshAgent('valid'), body: JSON.stringify(body) });
    expect(r.status, r.text).toBe(201);
    expect(r.json.allocated_budget).toBe(body.max_budget_usd);
  });

  it('accepts quantity written as 1e2 (it is the integer 100)', async () => {
    const body = '{"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":1e2,"max_budget_usd":1}';
    expect((await post(sys.url, { spiffe: freshAgent('exp'), body })).status).toBe(201);
  });
});

describe('8. order domain and the 201', () => {
  it.each([ORDERS, EDGE_ORDERS])('creates an order through %s and reads it back', async (path) => {
    const traceId = `t201-${Math.random().toString(36).slice(2)}`;
    const id = freshAgent('order');
    const before = placed();
    const r = await post(sys.url, { path, spiffe: id, headers: { 'x-trace-id': traceId } });
    expect(r.status, r.text).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual(['allocated_budget', 'order_id', 'processed_at', 'status']);
    expect(r.json.status).toBe('APPROVED');
    expect(r.json.allocated_budget).toBe(250.75);
    expect(r.json.processed_at).toBeCloseTo(clock.now() / 1000, 3);
    expect(r.headers.location).toBe(`${ORDERS}/${r.json.order_id}`);
    expect(r.headers['x-trace-id']).toBe(traceId);
    expect(placed()).toBe(before + 1);

    const token = await sys.token(['orders:read']);
    const g = await sys.gql(
      'query ($id: ID!) { purchaseOrder(orderId: $id) { orderId status agentId spiffeId sku quantity allocatedBudget processedAt } }',
      { token, variables: { id: r.json.order_id } },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data?.purchaseOrder).toEqual({
      orderId: r.json.order_id,
      status: 'APPROVED',
      agentId: 'agent-0000001',
      spiffeId: id,
      sku: 'SKU-ABC-123456',
      quantity: 5,
      allocatedBudget: 250.75,
      processedAt: r.json.processed_at,
    });

    const own = await fetch(`${sys.url}${r.headers.location}`, { headers: { 'x-spiffe-id': id } });
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual(r.json);
    const other = await fetch(`${sys.url}${r.headers.location}`, {
      headers: { 'x-spiffe-id': freshAgent('other') },
    });
    expect(other.status).toBe(404);

    const audit = await waitForAudit(traceId);
    expect(audit[0]).toMatchObject({ status: 201, identity: id, reason: 'ok' });
    expect(audit[0]?.duration_ms).toBeGreaterThan(0);
  });

  it('refuses the GraphQL read without the orders:read role', async () => {
    const g = await sys.gql('{ purchaseOrders { orderId } }');
    expect(g.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers 503 with Retry-After and stores nothing when the order domain is unavailable', async () => {
    const id = freshAgent('down');
    const count = async () =>
      Number(
        (
          await db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM purchase_orders WHERE spiffe_id = $1',
            [id],
          )
        )[0]?.n,
      );
    db.failOrders = true;
    try {
      const r = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'down-1' } });
      expectProblem(r, 503);
      expect(r.headers['retry-after']).toBe('1');
    } finally {
      db.failOrders = false;
    }
    expect(await count()).toBe(0);
    // The key was released: the retry goes through.
    const retry = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'down-1' } });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await count()).toBe(1);
  });
});

describe('7. idempotency', () => {
  it('replays the stored reply for the same key and body, creating one order', async () => {
    const id = freshAgent('idem');
    const before = placed();
    const first = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': '"key-1"' } });
    const again = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': '"key-1"' } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json).toEqual(first.json);
    expect(again.headers.location).toBe(first.headers.location);
    expect(placed()).toBe(before + 1);
  });

  it('treats the body by content, not by bytes (whitespace and key order do not matter)', async () => {
    const id = freshAgent('idem');
    const a = await post(sys.url, {
      spiffe: id,
      headers: { 'idempotency-key': 'k' },
      body: JSON.stringify(validOrder()),
    });
    const o = validOrder();
    const reordered = `{ "max_budget_usd": ${o.max_budget_usd}, "quantity": ${o.quantity}, "sku": "${o.sku}", "agent_id": "${o.agent_id}" }`;
    const b = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'k' }, body: reordered });
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json.order_id).toBe(a.json.order_id);
  });

  it('answers 422 when the key comes back with another body', async () => {
    const id = freshAgent('idem');
    await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'k2' } });
    const before = placed();
    const r = await post(sys.url, {
      spiffe: id,
      headers: { 'idempotency-key': 'k2' },
      body: JSON.stringify(validOrder({ quantity: 6 })),
    });
    expectProblem(r, 422, 'idempotency-key-reused');
    expect(placed()).toBe(before);
  });

  it('answers 409 while the first call with the key is in flight', async () => {
    const id = freshAgent('idem');
    const hold = db.holdOrders();
    const first = post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'k3' } });
    await hold.reached;
    const second = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'k3' } });
    expectProblem(second, 409, 'idempotency-key-in-flight');
    expect(second.headers['retry-after']).toBeDefined();
    hold.release();
    expect((await first).status).toBe(201);
    const third = await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'k3' } });
    expect(third.headers['idempotent-replayed']).toBe('true');
  });

  it('keeps keys apart per identity', async () => {
    const a = await post(sys.url, { spiffe: freshAgent('idem'), headers: { 'idempotency-key': 'shared' } });
    const b = await post(sys.url, { spiffe: freshAgent('idem'), headers: { 'idempotency-key': 'shared' } });
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json.order_id).not.toBe(a.json.order_id);
  });

  it.each([
    ['a key longer than 255 characters', 'k'.repeat(256)],
    ['a key with a space', 'two words'],
    ['an empty quoted key', '""'],
  ])('refuses %s with 400', async (_name, key) => {
    const r = await post(sys.url, { spiffe: freshAgent('idem'), headers: { 'idempotency-key': key } });
    expectProblem(r, 400);
  });
});

describe('3. agent block (429 after more than 5 consecutive contract errors)', () => {
  const bad = JSON.stringify(validOrder({ quantity: 0 }));

  it('blocks on the 6th consecutive error for 15 minutes, then lets the agent back', async () => {
    const id = freshAgent('block');
    for (let i = 1; i <= 6; i++) expect((await post(sys.url, { spiffe: id, body: bad })).status).toBe(422);
    const before = placed();
    const blocked = await post(sys.url, { spiffe: id });
    expectProblem(blocked, 429, 'agent-blocked');
    expect(blocked.headers['retry-after']).toBe('900');
    expect(placed()).toBe(before);

    clock.advance(15 * 60_000 - 1000);
    const still = await post(sys.url, { spiffe: id });
    expect(still.status).toBe(429);
    expect(still.headers['retry-after']).toBe('1');

    clock.advance(1000);
    expect((await post(sys.url, { spiffe: id })).status).toBe(201);
  });

  it('counts 400/413/415 body errors too, and a valid request resets the count', async () => {
    const id = freshAgent('block');
    const errors = [
      { body: bad },
      { body: '{' },
      { body: 'x', headers: { 'content-type': 'text/plain' } },
      { body: bad },
      { body: bad },
    ];
    for (const e of errors)
      expect((await post(sys.url, { spiffe: id, ...e })).status).toBeGreaterThanOrEqual(400);
    expect((await post(sys.url, { spiffe: id })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await post(sys.url, { spiffe: id, body: bad })).status).toBe(422);
    expect((await post(sys.url, { spiffe: id })).status).toBe(201);
  });

  it('does not count refusals that are not contract errors (401, 403, replay mismatch)', async () => {
    const id = freshAgent('block');
    await post(sys.url, { spiffe: id, headers: { 'idempotency-key': 'm' } });
    for (let i = 0; i < 6; i++) {
      const r = await post(sys.url, {
        spiffe: id,
        headers: { 'idempotency-key': 'm' },
        body: JSON.stringify(validOrder({ quantity: 7 })),
      });
      expect(r.status).toBe(422);
    }
    expect((await post(sys.url, { spiffe: id })).status).toBe(201);
  });

  it('blocks one identity only', async () => {
    const id = freshAgent('block');
    for (let i = 0; i < 6; i++) await post(sys.url, { spiffe: id, body: bad });
    expect((await post(sys.url, { spiffe: id })).status).toBe(429);
    expect((await post(sys.url, { spiffe: freshAgent('block') })).status).toBe(201);
  });
});

describe('4. rate limit (token bucket per identity)', () => {
  it('allows a burst of 20, then 429 with Retry-After and RateLimit headers; refills at 10/s', async () => {
    const id = freshAgent('rate');
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 21; i++) {
      last = await post(sys.url, { spiffe: id });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 201)).toBe(true);
    expect(statuses[20]).toBe(429);
    const r = last as Reply;
    expectProblem(r, 429, 'rate-limited');
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['ratelimit-policy']).toBe('"agent";q=20;w=2');
    expect(r.headers.ratelimit).toBe('"agent";r=0;t=2');

    clock.advance(100);
    const refilled = await post(sys.url, { spiffe: id });
    expect(refilled.status).toBe(201);
    expect(refilled.headers.ratelimit).toBe('"agent";r=0;t=2');
    expect((await post(sys.url, { spiffe: id })).status).toBe(429);
  });

  it('counts the edge path and the canonical path in one bucket', async () => {
    const id = freshAgent('rate');
    for (let i = 0; i < 20; i++) await post(sys.url, { spiffe: id, path: i % 2 ? EDGE_ORDERS : ORDERS });
    expect((await post(sys.url, { spiffe: id, path: EDGE_ORDERS })).status).toBe(429);
  });
});

describe('9. audit', () => {
  it('echoes X-Trace-Id, uses unknown-trace without it, and records every call after the response', async () => {
    const r = await post(sys.url, { spiffe: freshAgent('audit') });
    expect(r.headers['x-trace-id']).toBe('unknown-trace');
    const rows = await waitForAudit('unknown-trace');
    expect(rows.length).toBeGreaterThan(0);
  });

  it('keeps an intact keyed chain over every call of this suite (embedded store)', async () => {
    const { verifyAuditLog } = await import('../../gateway/agent/audit/verify.ts');
    const { auditKeysFile, FileAuditKeys } = await import('../../gateway/agent/audit/keys.ts');
    const keys = FileAuditKeys.open(auditKeysFile(sys.config), clock, { create: false });
    const r = await verifyAuditLog(sys.platform.db, {
      keyOf: (kid) => keys.keyOf(kid),
      checkpoints: { valid: [], invalid: [] },
    });
    expect(r.ok).toBe(true);
    expect(r.ok && r.entries).toBeGreaterThan(100);
  });
});

/**
 * An operator's free text at each of the five entry points that store it, over GraphQL on the
 * embedded system (issues 47/50; the rule: lib/text/free-text.ts, docs/procurement.md "Operator
 * free text"). A lone surrogate (an approval's note or a rejection's reason, stored in the
 * order's approvals as jsonb, made PostgreSQL fail as DOWNSTREAM_SERVICE_ERROR; names and
 * descriptions in text columns were kept as U+FFFD), U+0000, a control character, a bidirectional
 * control (session 57) and a text over the field's maximum are each refused as BAD_USER_INPUT
 * naming the field; a text of emoji up to the maximum (counted in code points) and right-to-left
 * text are kept as written.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, freshAgent, post, validOrder } from './support/agent.ts';
import { setApprovalPolicy } from './support/spend.ts';

let sys: TestSystem;
let spendAdmin: string;
let approver: string;
let agentsAdmin: string;
let webhooksAdmin: string;
let fulfiller: string;

beforeAll(async () => {
  sys = await startEmbedded({
    AGENT_SCOPE_POLICY: JSON.stringify({
      [AGENT]: ['orders:create', 'orders:read', 'orders:cancel', 'spend:read'],
    }),
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
  });
  spendAdmin = await sys.token(['spend:admin']);
  approver = await sys.token(['orders:approve'], 'alice');
  agentsAdmin = await sys.token(['agents:admin']);
  webhooksAdmin = await sys.token(['webhooks:admin']);
  fulfiller = await sys.token(['orders:fulfill'], 'ops-ship');
}, 60_000);
afterAll(() => sys?.close());

/** Independent of the code under test: Unicode text iff UTF-8 carries it unchanged. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

/** An order of a fresh agent waiting for approval (its policy approves above 100.00). */
async function pendingOrder(): Promise<string> {
  const agent = freshAgent('unstorable');
  await setApprovalPolicy(sys, spendAdmin, agent);
  const r = await post(sys.url, { spiffe: agent, body: JSON.stringify(validOrder()) });
  expect(r.status, r.text).toBe(202);
  return String(r.json.order_id);
}

/** An order of a fresh agent without a spend policy: approved at once, so it may ship. */
async function approvedOrder(): Promise<string> {
  const r = await post(sys.url, { spiffe: freshAgent('ship'), body: JSON.stringify(validOrder()) });
  expect(r.status, r.text).toBe(201);
  return String(r.json.order_id);
}

type Outcome = { status: number; code: unknown; field: unknown; message: string; data: unknown };
const outcome = (r: Awaited<ReturnType<TestSystem['gql']>>, at: string): Outcome => ({
  status: r.status,
  code: r.errors?.[0]?.extensions?.code,
  field: (r.errors?.[0]?.extensions as { field?: unknown } | undefined)?.field,
  message: r.errors?.[0]?.message ?? '',
  data: r.data?.[at],
});

/** Mutation, field, its maximum in code points, the call, and what the reply holds when the text is kept. */
type Call = [string, string, number, (text: string) => Promise<Outcome>, (text: string) => unknown];
const calls: Call[] = [
  [
    'recordOrderShipment',
    'trackingNumber',
    100,
    async (t) =>
      outcome(
        await sys.gql(
          'mutation($id: ID!, $t: String!) { recordOrderShipment(orderId: $id, trackingNumber: $t) { status shipments { trackingNumber } } }',
          { token: fulfiller, variables: { id: await approvedOrder(), t } },
        ),
        'recordOrderShipment',
      ),
    (trackingNumber) => ({ shipments: [{ trackingNumber }] }),
  ],
  [
    'approvePurchaseOrder',
    'note',
    1000,
    async (note) =>
      outcome(
        await sys.gql(
          'mutation($id: ID!, $note: String) { approvePurchaseOrder(orderId: $id, note: $note) { status approvals { note } } }',
          { token: approver, variables: { id: await pendingOrder(), note } },
        ),
        'approvePurchaseOrder',
      ),
    (note) => ({ status: 'APPROVED', approvals: [{ note }] }),
  ],
  [
    'rejectPurchaseOrder',
    'reason',
    1000,
    async (reason) =>
      outcome(
        await sys.gql(
          'mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) { status decisionReason } }',
          { token: approver, variables: { id: await pendingOrder(), reason } },
        ),
        'rejectPurchaseOrder',
      ),
    (reason) => ({ status: 'REJECTED', decisionReason: reason }),
  ],
  [
    'issueCheckoutApiKey',
    'name',
    100,
    async (name) =>
      outcome(
        await sys.gql(
          'mutation($i: IssueCheckoutApiKeyInput!) { issueCheckoutApiKey(input: $i) { apiKey { name } } }',
          {
            token: agentsAdmin,
            variables: {
              i: { name, spiffeId: freshAgent('key'), agentId: 'agent-0000001', scopes: ['orders:create'] },
            },
          },
        ),
        'issueCheckoutApiKey',
      ),
    (name) => ({ apiKey: { name } }),
  ],
  [
    'registerWebhookEndpoint',
    'description',
    500,
    async (description) =>
      outcome(
        await sys.gql(
          'mutation($d: String) { registerWebhookEndpoint(url: "https://hooks.example/x", eventTypes: ["com.agent-commerce.procurement.OrderPlaced"], description: $d) { endpoint { description } } }',
          { token: webhooksAdmin, variables: { d: description } },
        ),
        'registerWebhookEndpoint',
      ),
    (description) => ({ endpoint: { description } }),
  ],
  [
    'registerOAuthClient',
    'name',
    100,
    async (name) =>
      outcome(
        await sys.gql('mutation($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { name } }', {
          token: agentsAdmin,
          variables: {
            i: {
              name,
              redirectUris: ['https://platform.example/cb'],
              ucpProfile: 'https://platform.example',
            },
          },
        }),
        'registerOAuthClient',
      ),
    (name) => ({ name }),
  ],
];

describe.each(calls)('%s: its %s', (_mutation, field, max, call, kept) => {
  it.each([
    ['a lone high surrogate', 'ok \ud800', /lone surrogate/],
    ['a lone low surrogate', '\udc00 ok', /lone surrogate/],
    ['a pair written low first', '\ude00\ud83d', /lone surrogate/],
    ['U+0000', 'a\u0000b', /holds U\+0000/],
    ['a control character (ESC)', 'a\u001b[2Jb', /control character U\+001B/],
    ['a C1 control character (CSI)', 'a\u009bb', /control character U\+009B/],
    ['a right-to-left override (display spoofing)', 'evil\u202emoc.elgoog', /bidirectional control U\+202E/],
    [
      'a text one character over the maximum',
      'x'.repeat(max + 1),
      new RegExp(`longer than ${max} characters`),
    ],
  ])('refuses %s as BAD_USER_INPUT naming the field', async (_what, text, reason) => {
    const r = await call(text);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(r.data ?? null).toBeNull();
    // GraphQL over HTTP answers 200 with the error; its 4xx class is the code (these subgraphs set no
    // extensions.http status: a 4xx from a subgraph would fail the distributed gateway's call).
    expect(r.status).toBe(200);
    expect(r.message).toMatch(new RegExp(`^${field} `));
    expect(r.message).toMatch(reason);
  });

  it('keeps a text with an emoji as written, right-to-left text, and one of emoji up to the maximum (code points)', async () => {
    const r = await call('ok \u{1F600}');
    expect(r.code).toBeUndefined();
    expect(r.data).toMatchObject(kept('ok \u{1F600}') as object);
    // Right-to-left text needs no control, and is kept as written.
    const rtl = await call('\u05e9\u05dc\u05d5\u05dd \u200f1');
    expect(rtl.code).toBeUndefined();
    expect(rtl.data).toMatchObject(kept('\u05e9\u05dc\u05d5\u05dd \u200f1') as object);
    const full = '\u{1F600}'.repeat(max);
    const f = await call(full);
    expect(f.code).toBeUndefined();
    expect(f.data).toMatchObject(kept(full) as object);
  });
});

it('answers any rejection reason with the order or BAD_USER_INPUT, never an internal error', async () => {
  const reject = calls[2]?.[3] as (text: string) => Promise<Outcome>;
  const text = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '\ud800',
          '\udbff',
          '\udc00',
          '\udfff',
          '\ud83d',
          '\ude00',
          '\u{1F600}',
          'a',
          '\u202e',
        ),
        fc.string({ unit: 'binary', maxLength: 3 }),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((p) => `why ${p.join('')}`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters have their own refusal
    .filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s));
  await fc.assert(
    fc.asyncProperty(text, async (reason) => {
      const r = await reject(reason);
      // Bidirectional controls (U+202A–U+202E, U+2066–U+2069) are refused as any other rule break.
      if (wellFormed(reason) && !/[\u202a-\u202e\u2066-\u2069]/.test(reason))
        expect(r).toMatchObject({ code: undefined, data: { decisionReason: reason.trim() } });
      else expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    }),
    { numRuns: 25 },
  );
});

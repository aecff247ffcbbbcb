/**
 * An operator's free text holding a lone surrogate (issue 47), over GraphQL on the embedded
 * system: an approval's note or a rejection's reason (stored in the order's approvals, jsonb)
 * made PostgreSQL fail, surfacing as DOWNSTREAM_SERVICE_ERROR; names and descriptions stored in
 * text columns would have been kept as U+FFFD. Each is refused as BAD_USER_INPUT naming the
 * field, as their control characters already were; a surrogate pair is kept.
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

type Outcome = { code: unknown; field: unknown; message: string; data: unknown };
const outcome = (r: Awaited<ReturnType<TestSystem['gql']>>, at: string): Outcome => ({
  code: r.errors?.[0]?.extensions?.code,
  field: (r.errors?.[0]?.extensions as { field?: unknown } | undefined)?.field,
  message: r.errors?.[0]?.message ?? '',
  data: r.data?.[at],
});

const calls: [string, string, (text: string) => Promise<Outcome>, (text: string) => unknown][] = [
  [
    'approvePurchaseOrder',
    'note',
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
];

describe.each(calls)('%s: its %s', (_mutation, field, call, kept) => {
  it.each([
    ['a lone high surrogate', 'ok \ud800'],
    ['a lone low surrogate', '\udc00 ok'],
    ['a pair written low first', '\ude00\ud83d'],
  ])('refuses %s as BAD_USER_INPUT naming the field', async (_what, text) => {
    const r = await call(text);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(r.message).toMatch(/lone surrogate/);
  });

  it('keeps a surrogate pair as written', async () => {
    const r = await call('ok \u{1F600}');
    expect(r.code).toBeUndefined();
    expect(r.data).toMatchObject(kept('ok \u{1F600}') as object);
  });
});

it('answers any rejection reason with the order or BAD_USER_INPUT, never an internal error', async () => {
  const reject = calls[1]?.[2] as (text: string) => Promise<Outcome>;
  const text = fc
    .array(
      fc.oneof(
        fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00', '\u{1F600}', 'a'),
        fc.string({ unit: 'binary', maxLength: 3 }),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((p) => `why ${p.join('')}`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters have their own refusal
    .filter((s) => !/[\u0000-\u001f\u007f]/.test(s));
  await fc.assert(
    fc.asyncProperty(text, async (reason) => {
      const r = await reject(reason);
      if (wellFormed(reason))
        expect(r).toMatchObject({ code: undefined, data: { decisionReason: reason.trim() } });
      else expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    }),
    { numRuns: 25 },
  );
});

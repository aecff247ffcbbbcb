import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';

const REGISTER = `mutation ($url: String!, $types: [String!]!, $description: String) {
  registerWebhookEndpoint(url: $url, eventTypes: $types, description: $description) {
    signingSecret endpoint { endpointId url eventTypes description status }
  }
}`;
const ROTATE =
  'mutation ($id: ID!) { rotateWebhookSecret(endpointId: $id) { signingSecret endpoint { endpointId } } }';
const DISABLE =
  'mutation ($id: ID!) { disableWebhookEndpoint(endpointId: $id) { endpointId status disabledReason disabledAt } }';
const REPLAY = 'mutation ($id: ID!) { replayWebhookDelivery(deliveryId: $id) { deliveryId } }';
const DELIVERIES = 'query ($id: ID!) { webhookDeliveries(endpointId: $id) { deliveryId } }';

const MAX_ENDPOINTS = 6;
const placed = EventTypes.OrderPlaced;
let sys: TestSystem;
let admin: string;

// Default settings: loopback and private addresses are refused.
beforeAll(async () => {
  sys = await startEmbedded({ WEBHOOK_MAX_ENDPOINTS: String(MAX_ENDPOINTS) });
  admin = await sys.token(['webhooks:admin']);
});
afterAll(() => sys?.close());

const register = (variables: Record<string, unknown>, token = admin) =>
  sys.gql(REGISTER, { token, variables });

describe('registering webhook endpoints', () => {
  it('returns the endpoint and its whsec_ signing secret once; the list never shows a secret', async () => {
    const res = await register({
      url: 'https://hooks.example.com/orders',
      types: [placed, placed],
      description: ' ERP ',
    });
    expect(res.errors).toBeUndefined();
    const r = (
      res.data as { registerWebhookEndpoint: { signingSecret: string; endpoint: Record<string, unknown> } }
    ).registerWebhookEndpoint;
    expect(r.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.endpoint).toMatchObject({
      url: 'https://hooks.example.com/orders',
      eventTypes: [placed],
      description: 'ERP',
      status: 'ACTIVE',
    });
    const list = await sys.gql('{ webhookEndpoints { endpointId url } }', { token: admin });
    expect(list.data?.webhookEndpoints).toContainEqual({
      endpointId: r.endpoint.endpointId,
      url: r.endpoint.url,
    });
    expect(JSON.stringify(list)).not.toContain(r.signingSecret);
  });

  const bad: [string, Record<string, unknown>, string, RegExp][] = [
    ['an ftp URL', { url: 'ftp://hooks.example.com/x', types: [placed] }, 'url', /http or https/],
    ['a relative URL', { url: '/hooks', types: [placed] }, 'url', /absolute/],
    ['an empty URL', { url: '', types: [placed] }, 'url', /absolute/],
    [
      'credentials in the URL',
      { url: 'https://a:b@hooks.example.com/', types: [placed] },
      'url',
      /credentials/,
    ],
    [
      'a loopback URL (not allowed by default)',
      { url: 'http://127.0.0.1:9/x', types: [placed] },
      'url',
      /private/,
    ],
    ['localhost', { url: 'http://localhost/x', types: [placed] }, 'url', /private/],
    ['the metadata address', { url: 'http://169.254.169.254/', types: [placed] }, 'url', /private/],
    [
      'a URL over 2048 characters',
      { url: `https://h.example.com/${'x'.repeat(2100)}`, types: [placed] },
      'url',
      /2048/,
    ],
    ['no event type', { url: 'https://hooks.example.com/', types: [] }, 'eventTypes', /at least one/],
    [
      'an unknown event type',
      { url: 'https://hooks.example.com/', types: ['com.example.Other'] },
      'eventTypes',
      /not one of/,
    ],
    [
      'a short event name',
      { url: 'https://hooks.example.com/', types: ['OrderPlaced'] },
      'eventTypes',
      /not one of/,
    ],
    [
      'a description over 500 characters',
      { url: 'https://hooks.example.com/', types: [placed], description: 'd'.repeat(501) },
      'description',
      /500/,
    ],
    [
      'U+0000 in the description',
      { url: 'https://hooks.example.com/', types: [placed], description: 'a\u0000b' },
      'description',
      /U\+0000/,
    ],
    [
      'a control character in the description',
      { url: 'https://hooks.example.com/', types: [placed], description: 'a\u001bb' },
      'description',
      /control character U\+001B/,
    ],
  ];
  it.each(bad)('refuses %s with BAD_USER_INPUT naming the field', async (_, variables, field, message) => {
    const res = await register(variables);
    expect(res.status).toBeLessThan(500);
    expect(res.data?.registerWebhookEndpoint ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(res.errors?.[0]?.message).toMatch(message);
  });

  it('refuses values of the wrong GraphQL type before any resolver runs', async () => {
    const res = await register({ url: 42, types: 'x' });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('requires the webhooks:admin role for every webhook field', async () => {
    const other = await sys.token(['orders:read', 'promotions:admin']);
    const id = 'whe_00000000000000000000000000000000';
    for (const [query, variables] of [
      [REGISTER, { url: 'https://hooks.example.com/', types: [placed] }],
      [ROTATE, { id }],
      [DISABLE, { id }],
      [REPLAY, { id: 'whd_00000000000000000000000000000000' }],
      [DELIVERIES, { id }],
      ['{ webhookEndpoints { endpointId } }', {}],
    ] as const) {
      const anonymous = await sys.gql(query, { variables });
      expect(anonymous.errors?.[0]?.extensions?.code, query).toBe('UNAUTHENTICATED');
      const forbidden = await sys.gql(query, { token: other, variables });
      expect(forbidden.errors?.[0]?.extensions?.code, query).toBe('FORBIDDEN');
    }
  });

  it('answers NOT_FOUND for unknown or malformed ids', async () => {
    for (const [query, id] of [
      [ROTATE, 'whe_0123456789abcdef0123456789abcdef'],
      [DISABLE, 'whe_0123456789abcdef0123456789abcdef'],
      [DELIVERIES, 'not-an-id'],
      [DELIVERIES, 'whe_0123456789abcdef0123456789abcdef'],
      [REPLAY, 'whd_0123456789abcdef0123456789abcdef'],
      [REPLAY, `whd_${'z'.repeat(5000)}`],
    ] as const) {
      const res = await sys.gql(query, { token: admin, variables: { id } });
      expect(res.status).toBeLessThan(500);
      expect(res.errors?.[0]?.extensions?.code, `${query} ${id.slice(0, 40)}`).toBe('NOT_FOUND');
    }
  });

  it('rotates a secret (a new one, shown once) and disables an endpoint, after which rotation is refused', async () => {
    const first = (await register({ url: 'https://hooks.example.com/rotate', types: [placed] })).data as {
      registerWebhookEndpoint: { signingSecret: string; endpoint: { endpointId: string } };
    };
    const id = first.registerWebhookEndpoint.endpoint.endpointId;
    const rotated = await sys.gql(ROTATE, { token: admin, variables: { id } });
    expect(rotated.errors).toBeUndefined();
    const secret = (rotated.data as { rotateWebhookSecret: { signingSecret: string } }).rotateWebhookSecret
      .signingSecret;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(first.registerWebhookEndpoint.signingSecret);

    const disabled = await sys.gql(DISABLE, { token: admin, variables: { id } });
    expect(disabled.data?.disableWebhookEndpoint).toMatchObject({
      endpointId: id,
      status: 'DISABLED',
      disabledReason: 'disabled by an operator',
    });
    // Disabling again is idempotent: the first reason and time stay.
    const again = await sys.gql(DISABLE, { token: admin, variables: { id } });
    expect(again.data?.disableWebhookEndpoint).toEqual(disabled.data?.disableWebhookEndpoint);
    const refused = await sys.gql(ROTATE, { token: admin, variables: { id } });
    expect(refused.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('never answers a 5xx to any registration input (fuzz), and stops at the endpoint limit with CONFLICT', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.webUrl({ withFragments: true, withQueryParameters: true }),
        ),
        fc.array(fc.oneof(fc.string({ maxLength: 60 }), fc.constant(placed)), { maxLength: 4 }),
        fc.option(fc.string({ maxLength: 600 })),
        async (url, types, description) => {
          const res = await register({ url, types, description });
          expect(res.status).toBeLessThan(500);
          if (res.errors) expect(['BAD_USER_INPUT', 'CONFLICT']).toContain(res.errors[0]?.extensions?.code);
          else expect(res.data?.registerWebhookEndpoint).toBeTruthy();
        },
      ),
      { numRuns: 60 },
    );
    for (let i = 0; i < MAX_ENDPOINTS; i++)
      await register({ url: `https://hooks.example.com/${i}`, types: [placed] });
    const over = await register({ url: 'https://hooks.example.com/over', types: [placed] });
    expect(over.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(over.errors?.[0]?.message).toMatch(`at most ${MAX_ENDPOINTS}`);
  });
});

/**
 * The binding's mapping as pure functions (gateway/agent/mcp/acp/call.ts, schemas.ts): tool
 * arguments → the ACP REST request, the route's reply → the session or ACP's Error, and the
 * tool schemas bundled from the vendored release.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAcpDocuments } from '../../gateway/agent/acp/schema/files.ts';
import { acpHttpCall, acpOutcome, META_HEADERS, paramInArguments } from '../../gateway/agent/mcp/acp/call.ts';
import { reachableDefs } from '../../gateway/agent/mcp/acp/schemas.ts';
import { ACP_TOOLS, type AcpTool, listedAcpTools } from '../../gateway/agent/mcp/acp/tools.ts';

const tool = (name: string): AcpTool => {
  const t = ACP_TOOLS.find((x) => x.name === name);
  if (!t) throw new Error(name);
  return t;
};
const META = { api_version: '2026-04-17', idempotency_key: 'k-1' };

describe('arguments → the ACP request', () => {
  it('maps every meta field of the binding to its header, and ignores unknown ones', () => {
    const meta = {
      api_version: '2026-04-17',
      idempotency_key: 'idem_1',
      request_id: 'req-1',
      user_agent: 'AgentShop/1.0',
      accept_language: 'en-US',
      signature: 'c2ln',
      timestamp: '2026-04-17T10:00:00Z',
      future_header: 'x',
    };
    const v = acpHttpCall(tool('get_checkout_session'), { meta, id: 'cs_1' });
    expect(v).toEqual({
      ok: true,
      call: {
        method: 'GET',
        path: '/checkout_sessions/cs_1',
        headers: {
          'api-version': '2026-04-17',
          'idempotency-key': 'idem_1',
          'request-id': 'req-1',
          'user-agent': 'AgentShop/1.0',
          'accept-language': 'en-US',
          signature: 'c2ln',
          timestamp: '2026-04-17T10:00:00Z',
        },
      },
    });
    expect(Object.keys(META_HEADERS)).toHaveLength(7);
  });

  it.each([
    [
      'create_checkout_session',
      { meta: META, payload: { currency: 'usd' } },
      'POST',
      '/checkout_sessions',
      '{"currency":"usd"}',
    ],
    [
      'update_checkout_session',
      { meta: META, id: 'cs_1', payload: {} },
      'POST',
      '/checkout_sessions/cs_1',
      '{}',
    ],
    [
      'complete_checkout_session',
      { meta: META, id: 'cs_1', payload: { a: 1 } },
      'POST',
      '/checkout_sessions/cs_1/complete',
      '{"a":1}',
    ],
    [
      'cancel_checkout_session',
      { meta: META, id: 'cs_1' },
      'POST',
      '/checkout_sessions/cs_1/cancel',
      undefined,
    ],
    [
      'cancel_checkout_session',
      { meta: META, id: 'cs_1', payload: {} },
      'POST',
      '/checkout_sessions/cs_1/cancel',
      '{}',
    ],
  ])('%s %j → %s %s', (name, args, method, path, payload) => {
    const v = acpHttpCall(tool(name), args);
    expect(v.ok && v.call).toMatchObject({ method, path, ...(payload !== undefined ? { payload } : {}) });
    if (v.ok && payload === undefined) expect('payload' in v.call).toBe(false);
  });

  it.each([
    ['create_checkout_session', 'not an object'],
    ['create_checkout_session', { payload: {} }],
    ['create_checkout_session', { meta: [], payload: {} }],
    ['create_checkout_session', { meta: META }],
    ['create_checkout_session', { meta: META, payload: [] }],
    ['create_checkout_session', { meta: META, payload: {}, id: 'cs_1' }],
    ['get_checkout_session', { meta: META }],
    ['get_checkout_session', { meta: META, id: '' }],
    ['get_checkout_session', { meta: META, id: 1 }],
    ['get_checkout_session', { meta: META, id: 'cs_1', payload: {} }],
    ['get_checkout_session', { meta: { api_version: 1 }, id: 'cs_1' }],
    ['get_checkout_session', { meta: { api_version: '2026-04-17\n' }, id: 'cs_1' }],
    ['get_checkout_session', { meta: { ...META, user_agent: 'agent\u00e9' }, id: 'cs_1' }],
    ['cancel_checkout_session', { meta: META, id: 'cs_1', payload: null }],
  ])('%s refuses %j as Invalid params', (name, args) => {
    const v = acpHttpCall(tool(name), args);
    expect(v.ok).toBe(false);
  });

  it('keeps any id in one path segment under its route', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (id) => {
        const v = acpHttpCall(tool('complete_checkout_session'), { meta: META, id, payload: {} });
        if (!v.ok) return false;
        const segment = v.call.path.slice('/checkout_sessions/'.length, -'/complete'.length);
        return (
          v.call.path.startsWith('/checkout_sessions/') &&
          v.call.path.endsWith('/complete') &&
          !/[/?#]/.test(segment) &&
          decodeURIComponent(segment) === id
        );
      }),
    );
  });
});

describe('the route’s reply → the binding’s result', () => {
  const session = { id: 'cs_1', status: 'ready_for_payment' };

  it('gives a 2xx body as the session, with its HTTP facts', () => {
    const o = acpOutcome({
      status: 201,
      headers: {
        location: '/acp/checkout_sessions/cs_1',
        'request-id': 'r-1',
        'idempotent-replayed': 'true',
      },
      body: JSON.stringify(session),
    });
    expect(o).toEqual({
      ok: true,
      session,
      text: JSON.stringify(session),
      http: {
        status: 201,
        location: '/acp/checkout_sessions/cs_1',
        request_id: 'r-1',
        idempotent_replayed: true,
      },
    });
  });

  it('gives an error body as ACP’s Error, its JSONPath param rebased into the arguments', () => {
    const error = {
      type: 'invalid_request',
      code: 'missing',
      message: '$.currency is required',
      param: '$.currency',
    };
    expect(acpOutcome({ status: 400, headers: {}, body: JSON.stringify(error) })).toEqual({
      ok: false,
      error: { ...error, param: '$.payload.currency' },
    });
  });

  it('never passes on a body that is not an ACP object', () => {
    for (const [status, body] of [
      [200, 'not json'],
      [200, '[]'],
      [500, '<html>'],
      [503, '{"type":"x"}'],
    ] as const) {
      const o = acpOutcome({ status, headers: {}, body });
      expect(o).toMatchObject({ ok: false, error: { type: 'processing_error', code: 'invalid_reply' } });
    }
  });

  it.each([
    ['$', '$.payload'],
    ['$.currency', '$.payload.currency'],
    ['$.line_items[1]', '$.payload.line_items[1]'],
    ["$['a b']", "$.payload['a b']"],
    ['id', 'id'],
  ])('rebases %s to %s', (from, to) => {
    expect(paramInArguments(from)).toBe(to);
  });
});

describe('the tool schemas', () => {
  it('bundles every definition a root reaches, and only those', () => {
    const doc = readAcpDocuments().checkout;
    const defs = reachableDefs(doc, ['CancelSessionRequest']);
    expect(Object.keys(defs)).toEqual(['CancelSessionRequest', 'IntentTrace']);
    expect(JSON.stringify(defs)).not.toMatch(/"example"/);
  });

  it('lists the five tools of the binding, each schema self-contained', () => {
    const tools = listedAcpTools();
    expect(tools.map((t) => t.name)).toEqual([
      'create_checkout_session',
      'get_checkout_session',
      'update_checkout_session',
      'complete_checkout_session',
      'cancel_checkout_session',
    ]);
    for (const t of tools)
      for (const schema of [t.inputSchema, t.outputSchema]) {
        expect(schema, t.name).toBeDefined();
        const text = JSON.stringify(schema);
        const defs = (schema?.$defs ?? {}) as Record<string, unknown>;
        for (const [, name] of text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g))
          expect(defs, `${t.name}: ${name}`).toHaveProperty([name as string]);
      }
  });
});

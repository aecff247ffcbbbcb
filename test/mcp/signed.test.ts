/**
 * An agent outside the mesh proves its identity to /mcp with an RFC 9421 signature (Web Bot
 * Auth profile), as it would to the order route: the signed identity reaches the tool call,
 * and a body other than the one its Content-Digest covers is refused before any MCP exchange.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, validOrder } from '../procurement/support/agent.ts';
import { ed25519, signedPost, writeKeysFile } from '../procurement/support/signed.ts';

const SIGNED = `${AGENT}/mcp-signed`;
const key = ed25519();
let sys: TestSystem;

beforeAll(async () => {
  const keys = await writeKeysFile(mkdtempSync(join(tmpdir(), 'ac-mcp-sigs-')), { [SIGNED]: [key] });
  // Loopback is not a trusted proxy: X-Spiffe-Id alone proves nothing here.
  sys = await startEmbedded({ AGENT_SIGNATURE_KEYS: keys, TRUSTED_PROXIES: '192.0.2.1' });
}, 60_000);
afterAll(() => sys?.close());

const toolCall = (args: Record<string, unknown>) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'place_purchase_order', arguments: args },
  });
const accept = { accept: 'application/json, text/event-stream' };

describe('a signed /mcp request', () => {
  it('runs the tool call as the signing identity', async () => {
    const r = await signedPost(sys.url, key, { path: '/mcp', body: toolCall(validOrder()), headers: accept });
    expect(r.status, r.text).toBe(200);
    const result = (r.json as { result: { structuredContent: { status: string; order_id: string } } }).result;
    expect(result.structuredContent.status).toBe('APPROVED');
    const read = await signedPost(sys.url, key, {
      path: '/mcp',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'get_order', arguments: { order_id: result.structuredContent.order_id } },
      }),
      headers: accept,
    });
    expect((read.json as { result: { structuredContent: unknown } }).result.structuredContent).toEqual(
      result.structuredContent,
    );
    // The tool call's audit entry says how the /mcp request proved the identity.
    let rows: { identity_source: string | null }[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = await sys.platform.db.query<{ identity_source: string | null }>(
        'SELECT identity_source FROM agent_audit_log WHERE order_id = $1 AND method = $2',
        [result.structuredContent.order_id, 'POST'],
      );
      if (rows.length === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(rows.map((r) => r.identity_source)).toEqual(['signature']);
  });

  it('is refused with 401 when the body is not the one its Content-Digest covers', async () => {
    const r = await signedPost(sys.url, key, {
      path: '/mcp',
      body: toolCall(validOrder()),
      headers: accept,
      send: { body: toolCall(validOrder({ quantity: 100 })) },
    });
    expect(r.status, r.text).toBe(401);
    expect(r.json.signature_error).toBe('content-digest-mismatch');
  });

  it('is refused with 401 when it only claims the identity with X-Spiffe-Id', async () => {
    const res = await fetch(`${sys.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...accept, 'x-spiffe-id': SIGNED },
      body: toolCall(validOrder()),
    });
    expect(res.status).toBe(401);
  });
});

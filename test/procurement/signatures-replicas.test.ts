/**
 * Replay across replicas: two gateway replicas (embedded systems, each its own process state)
 * sharing the machine's real Redis under one key prefix, behind one authority as a load
 * balancer would present them. A signed order accepted by one is refused by the other.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAgentRequest } from '../../gateway/agent/identity/signature/sign.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, ORDERS, post, validOrder } from './support/agent.ts';
import { ed25519, writeKeysFile } from './support/signed.ts';

const key = ed25519();
let a: TestSystem;
let b: TestSystem;

beforeAll(async () => {
  const keys = await writeKeysFile(mkdtempSync(join(tmpdir(), 'ac-sigs-')), { [`${AGENT}/replicas`]: [key] });
  const env = {
    AGENT_SIGNATURE_KEYS: keys,
    TRUSTED_PROXIES: '192.0.2.1',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix('sigs'),
  };
  [a, b] = await Promise.all([startEmbedded(env), startEmbedded(env)]);
}, 90_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('a signature nonce shared by two replicas through Redis', () => {
  const authority = 'orders.agent-commerce.example';
  const signed = async () => {
    const body = JSON.stringify(validOrder());
    const headers = await signAgentRequest({
      url: `https://${authority}${ORDERS}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      privateKey: key,
    });
    // Both replicas sit behind the balancer's public name, which forwards its Host as is.
    return { body, headers: { ...headers, host: authority } };
  };

  it('refuses on replica B the request replica A accepted', async () => {
    const { body, headers } = await signed();
    const first = await post(a.url, { spiffe: null, body, headers });
    expect(first.status, first.text).toBe(201);
    const replay = await post(b.url, { spiffe: null, body, headers });
    expect(replay.status, replay.text).toBe(401);
    expect(replay.json.signature_error).toBe('replayed-nonce');
  });

  it('lets exactly one of the same request sent to both replicas at once through', async () => {
    const { body, headers } = await signed();
    const replies = await Promise.all([a, b, a, b].map((s) => post(s.url, { spiffe: null, body, headers })));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 401, 401, 401]);
  });

  it('keeps its nonces in Redis, not in the replicas', async () => {
    const keys = await a.platform.redis?.keys(`${a.config.REDIS_KEY_PREFIX}agent:nonce:*`);
    expect(keys?.length).toBeGreaterThanOrEqual(2);
  });
});

/**
 * /mcp draws on the identity's one token bucket: every message but a tool call takes a token
 * at /mcp, a tool call takes its token in its route (never two). A bucket of 4 that does not
 * refill during the test makes the count exact.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { freshAgent, post, validOrder } from '../procurement/support/agent.ts';
import { problemOf, textOf } from './support.ts';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startEmbedded({ RATE_LIMIT_CAPACITY: '4', RATE_LIMIT_REFILL_PER_SECOND: '0.0001' });
});
afterAll(() => sys.close());

const message = (id: string, body: unknown) =>
  fetch(`${sys.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-spiffe-id': id,
    },
    body: JSON.stringify(body),
  });
const list = (id: string) => message(id, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
const place = (id: string) =>
  message(id, {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'place_purchase_order', arguments: validOrder() },
  });

describe('the rate limit of /mcp', () => {
  it('charges one token per tool call, not two', async () => {
    const id = freshAgent('rl');
    for (let i = 0; i < 4; i++) {
      const r = (await (await place(id)).json()) as { result: CallToolResult };
      expect(r.result.isError, textOf(r.result)).toBeFalsy();
    }
    const fifth = (await (await place(id)).json()) as { result: CallToolResult };
    expect(fifth.result.isError).toBe(true);
    expect(String(problemOf(fifth.result).type)).toMatch(/\/rate-limited$/);
  });

  it('charges tools/list, and answers 429 problem+json with Retry-After when the bucket is empty', async () => {
    const id = freshAgent('rl');
    for (let i = 0; i < 4; i++) expect((await list(id)).status).toBe(200);
    const res = await list(id);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await res.json()) as { type: string }).type).toMatch(/\/rate-limited$/);
  });

  it('shares the bucket with REST', async () => {
    const id = freshAgent('rl');
    for (let i = 0; i < 3; i++) expect((await post(sys.url, { spiffe: id })).status).toBe(201);
    expect((await list(id)).status).toBe(200);
    expect((await list(id)).status).toBe(429);
    expect((await post(sys.url, { spiffe: id })).status).toBe(429);
  });

  it('lets an SDK client connect and call on a fresh bucket', async () => {
    const id = freshAgent('rl');
    const client = new Client({ name: 'rl', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${sys.url}/mcp`), {
        requestInit: { headers: { 'x-spiffe-id': id } },
      }),
    );
    // initialize and notifications/initialized took two tokens; one call takes one more.
    const r = (await client.callTool({
      name: 'place_purchase_order',
      arguments: validOrder(),
    })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    await client.close();
  });
});

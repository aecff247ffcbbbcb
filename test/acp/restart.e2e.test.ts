/**
 * What an ACP platform keeps across a restart of the embedded system (its store on disk): its
 * API key, its sessions, and the idempotent replay of a request it sent before (RFC
 * agentic_checkout §6.6: replies are kept 24 hours).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { acp, expectError, expectSession, issueKey } from './support/acp.ts';

const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-acp-restart-')), EMBEDDED_DB: 'disk' };
let sys: TestSystem | undefined;
afterAll(() => sys?.close());

describe('a restart', () => {
  it('keeps the key, the session and the replay of an earlier request', async () => {
    sys = await startEmbedded(env);
    const { key } = await issueKey(sys);
    const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }] };
    const first = await acp(sys.url, key, 'POST', '/checkout_sessions', body, {
      'idempotency-key': 'restart-1',
    });
    expectSession(first, 201);
    await sys.close();

    sys = await startEmbedded(env);
    const replay = await acp(sys.url, key, 'POST', '/checkout_sessions', body, {
      'idempotency-key': 'restart-1',
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = { ...body, line_items: [{ id: 'SKU-ABC-000001', quantity: 3 }] };
    expectError(
      await acp(sys.url, key, 'POST', '/checkout_sessions', other, { 'idempotency-key': 'restart-1' }),
      422,
      'idempotency_conflict',
    );
    const read = expectSession(await acp(sys.url, key, 'GET', `/checkout_sessions/${first.body.id}`));
    expect(read.line_items).toEqual(first.body.line_items);
  });
});

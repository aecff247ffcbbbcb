/**
 * What an ACP platform keeps across a restart of the embedded system (its store on disk): its
 * API key, its sessions, and the idempotent replay of a request it sent before (RFC
 * agentic_checkout §6.6: replies are kept 24 hours).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import type { Queryable } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { acp, expectError, expectSession, issueKey } from './support/acp.ts';

const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-acp-restart-')), EMBEDDED_DB: 'disk' };
let sys: TestSystem | undefined;
const sessionRows = async (db: Queryable) =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM checkout_sessions'))[0]?.n;

/** Stops the running system, if any (a clean stop: it leaves its mark). */
async function stop(): Promise<void> {
  const running = sys;
  sys = undefined;
  await running?.close();
}

/**
 * Starts the system on the file's store, the one before stopped first: a start beside a running
 * system opened the same data directory twice, and left that one running in the worker (three of
 * them, to the end of the worker's run, serving nothing).
 */
async function restart(): Promise<TestSystem> {
  await stop();
  sys = await startEmbedded(env);
  return sys;
}
afterAll(stop);

describe('a restart', () => {
  it('keeps the key, the session and the replay of an earlier request', async () => {
    sys = await restart();
    const { key } = await issueKey(sys);
    const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }] };
    const first = await acp(sys.url, key, 'POST', '/checkout_sessions', body, {
      'idempotency-key': 'restart-1',
    });
    expectSession(first, 201);

    sys = await restart();
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

  it('meets its own session again when a create was answered but its reply never stored', async () => {
    sys = await restart();
    const { key } = await issueKey(sys);
    const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };
    const first = await acp(sys.url, key, 'POST', '/checkout_sessions', body, {
      'idempotency-key': 'lost-1',
    });
    expectSession(first, 201);
    await stop();
    // What a crash between the answer and the reply's write leaves: the session, no reply.
    const db = await openPglite(env.DATA_DIR);
    const before = await sessionRows(db);
    await db.query('DELETE FROM agent_idempotency');
    await db.close();

    sys = await restart();
    const again = await acp(sys.url, key, 'POST', '/checkout_sessions', body, {
      'idempotency-key': 'lost-1',
    });
    const session = expectSession(again, 201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(session.id).toBe(first.body.id);
    // A new key beside it is one new session: the replay above added none (counted below).
    const other = { ...body, line_items: [{ id: 'SKU-ABC-000001', quantity: 4 }] };
    const second = expectSession(
      await acp(sys.url, key, 'POST', '/checkout_sessions', other, { 'idempotency-key': 'lost-2' }),
      201,
    );
    expect(second.id).not.toBe(first.body.id);
    await stop();
    const after = await openPglite(env.DATA_DIR);
    expect(await sessionRows(after)).toBe((before ?? 0) + 1);
    await after.close();
  });

  /**
   * A session per tag, each of a platform of its own, created and completed under
   * Idempotency-Keys in one start of the system, which is stopped after.
   */
  async function completedThenStopped<T extends string[]>(
    ...tags: T
  ): Promise<{ [K in keyof T]: Completed }> {
    const running = await restart();
    const done: Completed[] = [];
    for (const tag of tags) done.push(await completeOne(running, tag));
    await stop();
    return done as { [K in keyof T]: Completed };
  }

  async function completeOne(running: TestSystem, tag: string) {
    const { key } = await issueKey(running);
    const body = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };
    const made = expectSession(
      await acp(running.url, key, 'POST', '/checkout_sessions', body, { 'idempotency-key': `${tag}-create` }),
      201,
    );
    const pay = { payment_data: { purchase_order_number: `PO-${tag}`, payment_terms: 'net_30' } };
    const path = `/checkout_sessions/${made.id}/complete`;
    const first = await acp(running.url, key, 'POST', path, pay, { 'idempotency-key': `${tag}-complete` });
    const done = expectSession(first);
    expect(done.status).toBe('completed');
    return { key, id: String(made.id), path, pay, first, order: (done.order as { id: string }).id };
  }
  type Completed = Awaited<ReturnType<typeof completeOne>>;

  it('answers a completion again from its session when its reply was lost', async () => {
    const [c] = await completedThenStopped('lost-reply');
    // A crash between the answer and the reply's write (the answer does not wait for it).
    const db = await openPglite(env.DATA_DIR);
    await db.query('DELETE FROM agent_idempotency');
    await db.close();

    sys = await restart();
    const again = await acp(sys.url, c.key, 'POST', c.path, c.pay, {
      'idempotency-key': 'lost-reply-complete',
    });
    const session = expectSession(again);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(session.status).toBe('completed');
    expect((session.order as { id: string }).id).toBe(c.order);
    // Another request (another key) is the completion of a completed session: refused.
    expectError(
      await acp(sys.url, c.key, 'POST', c.path, c.pay, { 'idempotency-key': 'lost-reply-other' }),
      405,
      'session_completed',
    );
  });

  /** Sets the session's row back to before its completion (its mark was never written). */
  async function rewind(db: Queryable, id: string, status: 'ready_for_payment' | 'not_ready_for_payment') {
    const [row] = await db.query<{ doc: string }>('SELECT doc FROM checkout_sessions WHERE id = $1', [id]);
    const doc = JSON.parse(String(row?.doc));
    const before = {
      ...doc,
      status,
      orderId: null,
      purchaseOrderNumber: null,
      completedBy: undefined,
      completionHolder: undefined,
      version: doc.version - 2,
    };
    await db.query('UPDATE checkout_sessions SET status = $2, version = $3, doc = $4 WHERE id = $1', [
      id,
      status,
      before.version,
      JSON.stringify(before),
    ]);
  }

  it('completes at start a session whose write a crash lost after its order, and takes the retry as its request', async () => {
    // Both in one start: one start fewer than a start each, the same rows, orders and clean stop.
    const [a, b] = await completedThenStopped('lost-write-a', 'lost-write-b');
    // What a crash between the order and the writes behind the answer leaves: the order, the row
    // as it was before the completion (from ready, or from not ready after a refused
    // completion), no stored reply, and no clean-stop mark.
    const db = await openPglite(env.DATA_DIR);
    await rewind(db, a.id, 'ready_for_payment');
    await rewind(db, b.id, 'not_ready_for_payment');
    await db.query('DELETE FROM agent_idempotency');
    await db.close();
    rmSync(join(env.DATA_DIR, 'checkout-stopped-cleanly'), { force: true });

    sys = await restart();
    for (const c of [a, b]) {
      const read = expectSession(await acp(sys.url, c.key, 'GET', `/checkout_sessions/${c.id}`));
      expect(read.status).toBe('completed');
      expect((read.order as { id: string }).id).toBe(c.order);
    }
    // The agent's retry of the request it got no answer to: answered as a replay, its order.
    const retry = () =>
      acp(sys?.url ?? '', a.key, 'POST', a.path, a.pay, { 'idempotency-key': 'lost-write-a-complete' });
    const again = await retry();
    const replayed = expectSession(again);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.status).toBe('completed');
    expect((replayed.order as { id: string }).id).toBe(a.order);
    // Its replay again is the same; a request after it is another completion (405).
    expect((await retry()).body).toEqual(again.body);
    expectError(
      await acp(sys.url, a.key, 'POST', a.path, a.pay, { 'idempotency-key': 'lost-write-a-other' }),
      405,
      'session_completed',
    );
  });

  it('does not look for lost writes after a clean stop', async () => {
    const [c] = await completedThenStopped('clean-stop');
    expect(existsSync(join(env.DATA_DIR, 'checkout-stopped-cleanly'))).toBe(true);
    // A row set back by hand while the mark stands: a start after a clean stop leaves it alone.
    const db = await openPglite(env.DATA_DIR);
    await rewind(db, c.id, 'ready_for_payment');
    await db.close();

    sys = await restart();
    const read = expectSession(await acp(sys.url, c.key, 'GET', `/checkout_sessions/${c.id}`));
    expect(read.status).toBe('ready_for_payment');
    expect(existsSync(join(env.DATA_DIR, 'checkout-stopped-cleanly'))).toBe(false);
  });
});

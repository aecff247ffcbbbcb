/**
 * lib/db/pglite-answer.ts, the embedded store thread's answering with its group commit, driven
 * with a store made here: which replies wait for the fence, when the fence runs, and what a
 * failed fence answers. That an acknowledged write survives a power cut is
 * test/faults/power-loss.test.ts's; that commits sent together share one sync,
 * test/faults/group-commit.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { GROUP_MS, type Reply, type Request, storeAnswerer } from '../../lib/db/pglite-answer.ts';

/** A store that records its statements and fences in `log`; its fence waits for `open()`. */
function fakeStore(o: { statementMs?: number; fenceFails?: boolean; grouped?: boolean } = {}) {
  const log: string[] = [];
  let inTx = false;
  let release: () => void = () => {};
  let fenceDone = Promise.resolve();
  const db = {
    async query<R>(sql: string): Promise<R[]> {
      if (o.statementMs) {
        const until = performance.now() + o.statementMs;
        while (performance.now() < until); // the store's thread is busy: nothing else runs
      }
      await Promise.resolve();
      log.push(sql);
      if (sql === 'BEGIN') inTx = true;
      if (sql === 'COMMIT' || sql === 'ROLLBACK') inTx = false;
      if (sql === 'FAIL') throw Object.assign(new Error('duplicate key'), { code: '23505' });
      return [{ sql }] as R[];
    },
    async exec() {},
    async close() {},
    grouped: o.grouped ?? true,
    inTransaction: () => inTx,
    fence: () => {
      log.push('fence');
      fenceDone = new Promise<void>((r) => {
        release = r;
      });
      return fenceDone.then(() => {
        log.push('fenced');
        if (o.fenceFails) throw new Error('EIO: the disk refused the sync');
      });
    },
  };
  const posted: Reply[] = [];
  const io = {
    post: (r: Reply) => {
      posted.push(r);
      log.push(`reply ${r.id}`);
    },
    receive: () => undefined,
    close: () => {},
  };
  return { db, io, log, posted, openFence: () => release() };
}

const q = (id: number, sql: string): Request => ({ id, op: 'query', sql, params: [] });
const settle = () => new Promise((r) => setTimeout(r, 5));

describe('the embedded store thread’s answers, grouped', () => {
  it('holds the replies after a commit until one fence has synced them all', async () => {
    const s = fakeStore();
    const answer = storeAnswerer(s.db, s.io);
    for (const [i, sql] of ['INSERT 1', 'INSERT 2', 'INSERT 3'].entries()) answer(q(i + 1, sql));
    await settle();
    expect(s.log).toEqual(['INSERT 1', 'INSERT 2', 'INSERT 3', 'fence']);
    expect(s.posted).toEqual([]);
    s.openFence();
    await settle();
    expect(s.log.slice(4)).toEqual(['fenced', 'reply 1', 'reply 2', 'reply 3']);
  });

  it('takes what arrived while the store ran into the same group, before the fence', async () => {
    const s = fakeStore();
    const arrived = [q(2, 'INSERT 2'), q(3, 'INSERT 3')];
    const answer = storeAnswerer(s.db, { ...s.io, receive: () => arrived.shift() });
    answer(q(1, 'INSERT 1'));
    await settle();
    expect(s.log).toEqual(['INSERT 1', 'INSERT 2', 'INSERT 3', 'fence']);
    s.openFence();
    await settle();
    expect(s.posted.map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it('answers a read, a ROLLBACK and what runs inside a transaction at once, with no fence', async () => {
    const s = fakeStore();
    const answer = storeAnswerer(s.db, s.io);
    answer(q(1, 'SELECT 1'));
    await settle();
    answer(q(2, 'BEGIN'));
    await settle();
    answer(q(3, 'INSERT inside'));
    await settle();
    answer(q(4, 'ROLLBACK'));
    await settle();
    expect(s.log).not.toContain('fence');
    expect(s.posted.map((r) => r.id)).toEqual([1, 2, 3, 4]);
  });

  it('holds a read that follows a commit (it may have read it), and fences before a BEGIN that follows one', async () => {
    const s = fakeStore();
    const answer = storeAnswerer(s.db, s.io);
    answer(q(1, 'INSERT'));
    answer(q(2, 'SELECT after'));
    answer(q(3, 'BEGIN'));
    await settle();
    // The fence ran before the BEGIN did: never inside a transaction block.
    expect(s.log).toEqual(['INSERT', 'SELECT after', 'fence']);
    expect(s.posted).toEqual([]);
    s.openFence();
    await settle();
    expect(s.log.slice(3)).toEqual(['fenced', 'reply 1', 'reply 2', 'BEGIN', 'reply 3']);
  });

  it('answers every held and later request with the error when the fence fails', async () => {
    const s = fakeStore({ fenceFails: true });
    const answer = storeAnswerer(s.db, s.io);
    answer(q(1, 'INSERT'));
    answer(q(2, 'FAIL'));
    await settle();
    s.openFence();
    await settle();
    answer(q(3, 'SELECT 1'));
    await settle();
    expect(s.posted.map((r) => [r.id, r.error?.message])).toEqual([
      [1, 'EIO: the disk refused the sync'],
      [2, 'EIO: the disk refused the sync'],
      [3, 'EIO: the disk refused the sync'],
    ]);
    expect(s.log).not.toContain('SELECT 1');
  });

  it('refuses a transaction after a failed fence, and still closes', async () => {
    const s = fakeStore({ fenceFails: true });
    let closed = false;
    const answer = storeAnswerer(s.db, { ...s.io, close: () => (closed = true) });
    answer(q(1, 'INSERT'));
    answer(q(2, 'BEGIN'));
    await settle();
    s.openFence();
    await settle();
    answer({ id: 3, op: 'close' });
    await settle();
    expect(s.log).not.toContain('BEGIN');
    expect(s.posted.map((r) => [r.id, r.error?.message])).toEqual([
      [1, 'EIO: the disk refused the sync'],
      [2, 'EIO: the disk refused the sync'],
      [3, undefined],
    ]);
    expect(closed).toBe(true);
  });

  it('fences a long stream every GROUP_MS instead of holding every reply to its end', async () => {
    const s = fakeStore({ statementMs: 1 });
    const answer = storeAnswerer(s.db, s.io);
    const n = 8 * GROUP_MS;
    for (let i = 1; i <= n; i++) answer(q(i, `INSERT ${i}`));
    await settle();
    const firstFence = s.log.indexOf('fence');
    // The first fence came after the inserts of about GROUP_MS, with most of the stream still to run.
    expect(firstFence).toBeGreaterThan(0);
    expect(firstFence).toBeLessThan(n / 2);
    for (let open = 0; open < n && s.posted.length < n; open++) {
      s.openFence();
      await settle();
    }
    expect(s.posted.map((r) => r.id)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    // Its replies left before the last insert ran.
    expect(s.log.indexOf('reply 1')).toBeLessThan(s.log.indexOf(`INSERT ${n}`));
  });
});

describe('the embedded store thread’s answers, a sync per commit', () => {
  it('sends each reply as soon as it is made and never fences', async () => {
    const s = fakeStore({ grouped: false });
    const answer = storeAnswerer(s.db, s.io);
    answer(q(1, 'INSERT'));
    answer(q(2, 'INSERT'));
    await settle();
    expect(s.log).toEqual(['INSERT', 'reply 1', 'INSERT', 'reply 2']);
  });
});

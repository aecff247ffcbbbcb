/**
 * The hash-chained audit log: the pure chain (fuzzed tampering), the SQL adapter against the
 * embedded store and the real Postgres (two writers sharing one chain), and the
 * `npm run audit:verify` command reporting the first broken link.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  type ChainedEntry,
  chain,
  GENESIS_HASH,
  verifyEntries,
} from '../../gateway/agent/audit/entry.ts';
import { auditMigrations } from '../../gateway/agent/audit/migrations.ts';
import { sqlAuditLog } from '../../gateway/agent/audit/sql.ts';
import { verifyAuditLog } from '../../gateway/agent/audit/verify.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { createLogger } from '../../lib/logger.ts';
import { freshPostgres } from '../support/services.ts';

const log = createLogger({ LOG_LEVEL: 'silent' });
const entry = (i: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  at: 1_767_225_600_000 + i,
  traceId: `trace-${i}`,
  method: 'POST',
  path: '/api/v2/procurement/orders',
  status: i % 3 === 0 ? 422 : 201,
  durationMs: 0.5 + i,
  identity: i % 5 === 0 ? null : 'spiffe://example.org/ns/ai/sa/procurement-agent',
  reason: i % 3 === 0 ? 'contract: /quantity must be <= 100' : 'ok',
  ...over,
});
const entries = (n: number) =>
  chain(
    { seq: 0, hash: GENESIS_HASH },
    Array.from({ length: n }, (_, i) => entry(i)),
  );

describe('hash chain (pure)', () => {
  it('verifies an intact chain', () => {
    expect(verifyEntries(entries(50))).toEqual({ ok: true, entries: 50 });
  });

  it('finds any altered field of any entry, at that entry', () => {
    const fields = ['at', 'traceId', 'method', 'path', 'status', 'durationMs', 'identity', 'reason'] as const;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 19 }), fc.constantFrom(...fields), (i, field) => {
        const es: ChainedEntry[] = entries(20);
        const e = es[i] as ChainedEntry;
        const current = e[field];
        const altered =
          typeof current === 'number' ? current + 1 : current === null ? 'someone' : `${current}x`;
        es[i] = { ...e, [field]: altered };
        const r = verifyEntries(es);
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.seq).toBe(i + 1);
          expect(r.problem).toContain('altered');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds a removed entry at its successor, a removed first entry, and a reordering', () => {
    const es = entries(10);
    const removed = verifyEntries([...es.slice(0, 4), ...es.slice(5)]);
    expect(removed).toMatchObject({ ok: false, seq: 5 });
    expect(verifyEntries(es.slice(1))).toMatchObject({ ok: false, seq: 1 });
    const swapped = [...es];
    [swapped[3], swapped[4]] = [swapped[4] as ChainedEntry, swapped[3] as ChainedEntry];
    expect(verifyEntries(swapped).ok).toBe(false);
  });

  it('finds a removed entry even when the following ones are re-numbered', () => {
    const es = entries(6);
    const renumbered = [...es.slice(0, 2), ...es.slice(3).map((e) => ({ ...e, seq: e.seq - 1 }))];
    const r = verifyEntries(renumbered);
    expect(r).toMatchObject({ ok: false, seq: 3 });
  });
});

async function exerciseSql(db: Db) {
  await migrate(db, auditMigrations);
  const a = sqlAuditLog(db, log);
  for (let i = 0; i < 120; i++) a.append(entry(i));
  await a.flush();
  expect(await verifyAuditLog(db)).toEqual({ ok: true, entries: 120 });
  const stored = await a.read(1, 200);
  expect(stored.map((e) => e.traceId)).toEqual(Array.from({ length: 120 }, (_, i) => `trace-${i}`));

  await db.query("UPDATE agent_audit_log SET status = 201, reason = 'ok' WHERE seq = 37");
  expect(await verifyAuditLog(db)).toMatchObject({ ok: false, seq: 37 });
}

// The embedded store (PGlite) runs the same SQL: orders.e2e.test.ts verifies its chain.
describe('SQL audit log, Postgres', () => {
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  beforeAll(async () => {
    pg = await freshPostgres('audit');
  });
  afterAll(() => pg.drop());

  it('stores entries in order, chained, and finds an altered row', async () => {
    const db = await openPostgres(pg.url);
    try {
      await exerciseSql(db);
    } finally {
      await db.close();
    }
  });
});

describe('two gateway processes writing one chain (Postgres)', () => {
  it('keeps a single intact chain', async () => {
    const pg = await freshPostgres('audit2');
    const [db1, db2] = [await openPostgres(pg.url), await openPostgres(pg.url)];
    try {
      await migrate(db1, auditMigrations);
      const a = sqlAuditLog(db1, log);
      const b = sqlAuditLog(db2, log);
      for (let i = 0; i < 300; i++) (i % 2 ? a : b).append(entry(i));
      await Promise.all([a.flush(), b.flush()]);
      expect(await verifyAuditLog(db1)).toEqual({ ok: true, entries: 300 });
    } finally {
      await db1.close();
      await db2.close();
      await pg.drop();
    }
  });
});

describe('npm run audit:verify', () => {
  const run = promisify(execFile);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const verify = async (url: string) => {
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'audit:verify'], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' },
      });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: `${e.stdout}${e.stderr}` };
    }
  };

  it('reports an intact log, then the first broken link after a row is removed', async () => {
    const pg = await freshPostgres('auditcli');
    const db = await openPostgres(pg.url);
    try {
      await migrate(db, auditMigrations);
      const a = sqlAuditLog(db, log);
      for (let i = 0; i < 25; i++) a.append(entry(i));
      await a.flush();
      const ok = await verify(pg.url);
      expect(ok.code, ok.out).toBe(0);
      expect(ok.out).toContain('intact: 25 entries');

      await db.query('DELETE FROM agent_audit_log WHERE seq = 12');
      const broken = await verify(pg.url);
      expect(broken.code).toBe(1);
      expect(broken.out).toContain('BROKEN at entry 12');
    } finally {
      await db.close();
      await pg.drop();
    }
  }, 60_000);
});

/**
 * The keyed, anchored audit log (issue 13): HMAC links under a key held outside the database,
 * signed checkpoints outside the table, and `npm run audit:verify`. The pure chain is fuzzed;
 * the five tamperings (edit, delete, reorder, truncate, rewrite the whole chain without the
 * key) are each made on the embedded store (PGlite) and on the real Postgres, and each must be
 * reported at the right entry.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKPOINT_ISSUER,
  CHECKPOINT_TYP,
  createCheckpointer,
  HEAD_FILE,
  openCheckpointKeys,
  readCheckpoints,
  writeCheckpoint,
} from '../../gateway/agent/audit/checkpoint.ts';
import {
  type AuditEntry,
  type ChainedEntry,
  chain,
  GENESIS_HASH,
  type LinkKey,
  legacyHash,
  linkHash,
  verifyEntries,
} from '../../gateway/agent/audit/entry.ts';
import { auditKeysFile, FileAuditKeys } from '../../gateway/agent/audit/keys.ts';
import { auditMigrations } from '../../gateway/agent/audit/migrations.ts';
import { readAudit, sqlAuditLog } from '../../gateway/agent/audit/sql.ts';
import { type AuditReport, verifyAuditLog } from '../../gateway/agent/audit/verify.ts';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { createLogger } from '../../lib/logger.ts';
import { signJws } from '../../lib/quote-token/index.ts';

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
const KEY: LinkKey = { kid: 'hk_test', secret: randomBytes(32) };
const keyOf = (kid: string) => (kid === KEY.kid ? KEY.secret : undefined);
const entries = (n: number, key = KEY) =>
  chain(
    { seq: 0, hash: GENESIS_HASH },
    Array.from({ length: n }, (_, i) => entry(i)),
    key,
  );
const verify = (es: Iterable<ChainedEntry>, legacyUntil = 0) => verifyEntries(es, { keyOf, legacyUntil });

describe('keyed chain (pure)', () => {
  it('verifies an intact chain', () => {
    expect(verify(entries(50))).toEqual({ ok: true, entries: 50 });
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
        expect(verify(es)).toMatchObject({ ok: false, seq: i + 1, kind: 'altered' });
      }),
      { numRuns: 300 },
    );
  });

  it('finds a removed entry at its successor, a removed first entry, and a reordering', () => {
    const es = entries(10);
    expect(verify([...es.slice(0, 4), ...es.slice(5)])).toMatchObject({ ok: false, seq: 5, kind: 'missing' });
    expect(verify(es.slice(1))).toMatchObject({ ok: false, seq: 1 });
    const swapped = [...es];
    [swapped[3], swapped[4]] = [swapped[4] as ChainedEntry, swapped[3] as ChainedEntry];
    expect(verify(swapped).ok).toBe(false);
  });

  it('finds a removed entry even when the following ones are re-numbered', () => {
    const es = entries(6);
    const renumbered = [...es.slice(0, 2), ...es.slice(3).map((e) => ({ ...e, seq: e.seq - 1 }))];
    expect(verify(renumbered)).toMatchObject({ ok: false, seq: 3 });
  });

  it('cannot be rewritten whole without the key: another secret, another key id, or plain SHA-256', () => {
    const sameKid = entries(8, { kid: KEY.kid, secret: randomBytes(32) });
    expect(verify(sameKid)).toMatchObject({ ok: false, seq: 1, kind: 'altered' });
    const ownKid = entries(8, { kid: 'hk_attacker', secret: randomBytes(32) });
    expect(verify(ownKid)).toMatchObject({ ok: false, seq: 1, kind: 'unknown-key' });
    let prev = GENESIS_HASH;
    const unkeyed = Array.from({ length: 8 }, (_, i) => {
      const e = entry(i);
      const hash = legacyHash(i + 1, prev, e);
      const out = { ...e, seq: i + 1, prevHash: prev, keyId: null, hash };
      prev = hash;
      return out;
    });
    expect(verify(unkeyed)).toMatchObject({ ok: false, seq: 1, kind: 'unkeyed' });
    // The same unkeyed entries are accepted where a checkpoint sealed them as the legacy prefix.
    expect(verify(unkeyed, 8)).toEqual({ ok: true, entries: 8 });
  });

  it('verifies across a key rotation: each entry by the key it names', () => {
    const next: LinkKey = { kid: 'hk_next', secret: randomBytes(32) };
    const first = entries(5);
    const last = first[first.length - 1] as ChainedEntry;
    const rest = chain(
      last,
      Array.from({ length: 5 }, (_, i) => entry(i + 5)),
      next,
    );
    const both = (kid: string) => (kid === next.kid ? next.secret : keyOf(kid));
    expect(verifyEntries([...first, ...rest], { keyOf: both })).toEqual({ ok: true, entries: 10 });
    expect(verifyEntries([...first, ...rest], { keyOf })).toMatchObject({
      ok: false,
      seq: 6,
      kind: 'unknown-key',
    });
    expect(linkHash(1, GENESIS_HASH, entry(0), KEY)).not.toBe(linkHash(1, GENESIS_HASH, entry(0), next));
  });
});

/** A gateway's audit set-up in a temporary DATA_DIR: link keys, checkpoint keys and directory. */
async function auditSetup() {
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-audit-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const clock = new ManualClock(1_767_225_600_000);
  const keys = FileAuditKeys.open(auditKeysFile(config), clock);
  const signing = await openCheckpointKeys(config, clock);
  const dir = join(dataDir, 'audit-checkpoints');
  const checkpointer = createCheckpointer({ dir, keys: signing, clock, everyMs: 3_600_000, log });
  const report = async (db: Db): Promise<AuditReport> =>
    verifyAuditLog(db, { keyOf: (kid) => keys.keyOf(kid), checkpoints: await readCheckpoints(dir, signing) });
  return { dataDir, config, clock, keys, signing, dir, checkpointer, report };
}

const COLUMNS =
  'seq, at, trace_id, method, path, status, duration_ms, identity, reason, prev_hash, key_id, hash';
const tamperings: [string, string[], Partial<AuditReport>][] = [
  [
    'edit: a refused call rewritten as a success',
    ["UPDATE agent_audit_log SET status = 201, reason = 'ok' WHERE seq = 37"],
    { seq: 37, kind: 'altered' },
  ],
  ['delete: one entry removed', ['DELETE FROM agent_audit_log WHERE seq = 20'], { seq: 20, kind: 'missing' }],
  [
    'reorder: two entries swapped in place',
    [
      `UPDATE agent_audit_log a SET at = b.at, trace_id = b.trace_id, status = b.status, duration_ms = b.duration_ms, identity = b.identity, reason = b.reason, prev_hash = b.prev_hash, hash = b.hash
         FROM (SELECT * FROM agent_audit_log WHERE seq IN (10, 11)) b WHERE a.seq IN (10, 11) AND b.seq <> a.seq`,
    ],
    { seq: 10, kind: 'relinked' },
  ],
  [
    'truncate: the end cut off, checkpoints included',
    ['DELETE FROM agent_audit_log WHERE seq > 40'],
    { seq: 41, kind: 'truncated' },
  ],
  [
    'truncate: the last entries cut off, after the last checkpoint but sealed by the signed head',
    ['DELETE FROM agent_audit_log WHERE seq > 65'],
    { seq: 66, kind: 'truncated' },
  ],
];

describe.each([
  [
    'embedded store (PGlite)',
    async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} }),
  ],
  [
    'Postgres',
    async () => {
      const pg = await freshPostgres('audit');
      return { db: await openPostgres(pg.url), drop: () => pg.drop() };
    },
  ],
])('keyed, anchored audit log on the %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let setup: Awaited<ReturnType<typeof auditSetup>>;
  let pristine: ChainedEntry[];

  beforeAll(async () => {
    ({ db, drop } = await open());
    setup = await auditSetup();
    await migrate(db, auditMigrations);
    const a = sqlAuditLog(db, log, { keys: setup.keys, onWritten: (h) => setup.checkpointer.observe(h) });
    for (let i = 0; i < 60; i++) a.append(entry(i));
    await a.flush();
    await setup.checkpointer.headSealed();
    expect(await setup.checkpointer.seal()).toMatch(/checkpoint-0+60\.jws$/);
    for (let i = 60; i < 70; i++) a.append(entry(i));
    await a.close();
    await setup.checkpointer.headSealed();
    pristine = await readAudit(db, 1, 1000);
  });
  afterAll(async () => {
    setup.checkpointer.close();
    await db.close();
    await drop();
  });

  /** Puts the table back as written, before each tampering. */
  async function restore() {
    await db.query('DELETE FROM agent_audit_log');
    for (const e of pristine)
      await db.query(
        `INSERT INTO agent_audit_log (${COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
        [
          e.seq,
          e.at,
          e.traceId,
          e.method,
          e.path,
          e.status,
          e.durationMs,
          e.identity,
          e.reason,
          e.prevHash,
          e.keyId,
          e.hash,
        ],
      );
  }

  it('verifies as written: 70 keyed entries, a checkpoint at 60 and the signed head at 70', async () => {
    await restore();
    expect(pristine.every((e) => e.keyId === setup.keys.current().kid)).toBe(true);
    expect(await setup.report(db)).toEqual({ ok: true, entries: 70, anchoredUpTo: 70, unanchored: 0 });
  });

  it.each(tamperings)('detects %s', async (_what, statements, expected) => {
    await restore();
    for (const sql of statements) await db.query(sql);
    expect(await setup.report(db)).toMatchObject({ ok: false, ...expected });
  });

  it('detects the whole chain rewritten without the key (entries recomputed with a guessed key)', async () => {
    await restore();
    const forged = chain(
      { seq: 0, hash: GENESIS_HASH },
      pristine.map((e) => ({ ...e, reason: 'ok', status: 201 })),
      { kid: setup.keys.current().kid, secret: randomBytes(32) },
    );
    await db.query('DELETE FROM agent_audit_log');
    for (const e of forged)
      await db.query(
        `INSERT INTO agent_audit_log (${COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
        [
          e.seq,
          e.at,
          e.traceId,
          e.method,
          e.path,
          e.status,
          e.durationMs,
          e.identity,
          e.reason,
          e.prevHash,
          e.keyId,
          e.hash,
        ],
      );
    expect(await setup.report(db)).toMatchObject({ ok: false, seq: 1, kind: 'altered' });
  });

  it('detects a rewrite by someone who has the link key but not the checkpoint key', async () => {
    await restore();
    const head = pristine.slice(0, 29);
    const last = head[head.length - 1] as ChainedEntry;
    // Entry 30 onwards rewritten and re-linked with the real link key: every link verifies.
    const rewritten = chain(
      last,
      pristine.slice(29).map((e) => ({ ...e, reason: 'ok', status: 201 })),
      setup.keys.current(),
    );
    for (const e of rewritten)
      await db.query(
        'UPDATE agent_audit_log SET status = $2, reason = $3, prev_hash = $4, hash = $5 WHERE seq = $1',
        [e.seq, e.status, e.reason, e.prevHash, e.hash],
      );
    expect(await setup.report(db)).toMatchObject({ ok: false, seq: 60, kind: 'checkpoint-mismatch' });
  });

  it('detects a forged or altered checkpoint file', async () => {
    await restore();
    const [name] = readdirSync(setup.dir).filter((n) => n.endsWith('.jws'));
    const file = join(setup.dir, name as string);
    const original = readFileSync(file, 'utf8');
    const [h, p, s] = original.trim().split('.');
    const claims = JSON.parse(Buffer.from(p as string, 'base64url').toString());
    const lowered = Buffer.from(JSON.stringify({ ...claims, seq: 30 })).toString('base64url');
    try {
      writeFileSync(file, `${h}.${lowered}.${s}\n`);
      expect(await setup.report(db)).toMatchObject({ ok: false, kind: 'checkpoint-invalid' });
    } finally {
      writeFileSync(file, original);
    }
    expect((await setup.report(db)).ok).toBe(true);
  });
});

describe('checkpoints and keys', () => {
  it('tries a head write that failed again at the next checkpoint tick, with no batch after it', async () => {
    const { dir, signing, clock } = await auditSetup();
    // The failed write shows in the log: the file's absence cannot show it, since a tick 50 ms
    // later may already have written it again (seen once beside the whole suite).
    const failures: string[] = [];
    const watched = Object.assign(Object.create(log) as typeof log, {
      error: (_: unknown, msg: string) => failures.push(msg),
    });
    const quiet = createCheckpointer({
      dir,
      keys: signing,
      clock,
      everyMs: 50,
      headEveryMs: 0,
      log: watched,
    });
    const link = (n: number) => n.toString(16).padStart(64, '0');
    quiet.observe({ seq: 1, hash: link(1) });
    await quiet.headSealed();
    expect(failures).toEqual([]);
    // The directory goes away (a volume remounted): the write of the last batch's head fails.
    rmSync(dir, { recursive: true, force: true });
    quiet.observe({ seq: 2, hash: link(2) });
    await quiet.headSealed();
    expect(failures[0]).toMatch(/audit head not signed/);
    // No batch follows; the tick makes the directory again and writes the head.
    const until = Date.now() + 3000;
    while (Date.now() < until && (await readCheckpoints(dir, signing)).head?.seq !== 2)
      await new Promise((r) => setTimeout(r, 20));
    expect((await readCheckpoints(dir, signing)).head).toMatchObject({ seq: 2, hash: link(2) });
    await quiet.close();
  });

  it('spaces the head writes by headEveryMs, each taking the newest head, and close() writes at once', async () => {
    const { dir, signing, clock } = await auditSetup();
    let signatures = 0;
    const counted = {
      signingKey: () => {
        signatures++;
        return signing.signingKey();
      },
    };
    const spaced = createCheckpointer({
      dir,
      keys: counted,
      clock,
      everyMs: 3_600_000,
      headEveryMs: 1000,
      log,
    });
    const link = (n: number) => n.toString(16).padStart(64, '0');
    spaced.observe({ seq: 1, hash: link(1) });
    await spaced.headSealed(); // the first write does not wait
    expect(signatures).toBe(1);
    // A burst of batches within the interval: one more write, of the newest head (a burst
    // slowed past the interval by a loaded machine may take one more per interval it spans).
    const burst = performance.now();
    for (let seq = 2; seq <= 40; seq++) {
      spaced.observe({ seq, hash: link(seq) });
      await new Promise((r) => setTimeout(r, 2)); // written one by one, unspaced (~80 ms)
    }
    const spans = Math.floor((performance.now() - burst) / 1000);
    await spaced.headSealed();
    expect(signatures).toBeGreaterThanOrEqual(2);
    expect(signatures).toBeLessThanOrEqual(2 + spans);
    expect((await readCheckpoints(dir, signing)).head).toMatchObject({ seq: 40, hash: link(40) });

    // A wait of a minute is cut short by close(): the newest head is written, no minute passes
    // (the test's 5 s limit would fail it).
    const slow = createCheckpointer({
      dir,
      keys: counted,
      clock,
      everyMs: 3_600_000,
      headEveryMs: 60_000,
      log,
    });
    slow.observe({ seq: 41, hash: link(41) });
    await slow.headSealed();
    slow.observe({ seq: 42, hash: link(42) });
    await slow.close();
    expect((await readCheckpoints(dir, signing)).head).toMatchObject({ seq: 42, hash: link(42) });
    await spaced.close();
  });

  it('seals only when the head moved, and a rotated checkpoint key still verifies older checkpoints', async () => {
    const s = await auditSetup();
    expect(await s.checkpointer.seal()).toBeUndefined();
    s.checkpointer.observe({ seq: 3, hash: 'a'.repeat(64) });
    // A checkpoint seals what head.jws holds: nothing before the head is written.
    await s.checkpointer.headSealed();
    // Sealed off the loop: the file is not there when seal() returns (a synchronous write would
    // have made it, fsync and all, on the caller's turn), and is once it resolves. One at a time:
    // two seals at once write the moved head once.
    const file = join(s.dir, `checkpoint-${'3'.padStart(20, '0')}.jws`);
    const both = Promise.all([s.checkpointer.seal(), s.checkpointer.seal()]);
    expect(existsSync(file)).toBe(false);
    expect(await both).toEqual([file, undefined]);
    expect(existsSync(file)).toBe(true);
    expect(await s.checkpointer.seal()).toBeUndefined();
    const before = s.signing.signingKey().kid;
    await s.signing.rotate();
    s.clock.advance(365 * 24 * 3600 * 1000);
    s.checkpointer.observe({ seq: 5, hash: 'b'.repeat(64) });
    await s.checkpointer.headSealed();
    await s.checkpointer.seal();
    const read = await readCheckpoints(s.dir, s.signing);
    expect(read.invalid).toEqual([]);
    expect(read.valid.map((c) => c.seq)).toEqual([3, 5]);
    expect(read.head).toMatchObject({ seq: 5, hash: 'b'.repeat(64) });
    expect(s.signing.signingKey().kid).not.toBe(before);
    await s.checkpointer.close();
  });

  it('refuses a checkpoint signed by a key that is not in the checkpoint key ring', async () => {
    const s = await auditSetup();
    const other = await auditSetup();
    writeCheckpoint(s.dir, other.signing, { iss: CHECKPOINT_ISSUER, seq: 9, hash: 'c'.repeat(64), at: 1 });
    const read = await readCheckpoints(s.dir, s.signing);
    expect(read.valid).toEqual([]);
    expect(read.invalid[0]?.reason).toMatch(/unknown signing key/);
  });

  it('rotates the link key: new entries name the new key, old ones keep verifying', async () => {
    const s = await auditSetup();
    const db = await openPglite(undefined, TEST_PGLITE);
    try {
      await migrate(db, auditMigrations);
      const a = sqlAuditLog(db, log, { keys: s.keys });
      for (let i = 0; i < 5; i++) a.append(entry(i));
      await a.flush();
      const first = s.keys.current().kid;
      const second = s.keys.rotate();
      for (let i = 5; i < 10; i++) a.append(entry(i));
      await a.close();
      const kids = (await readAudit(db, 1, 100)).map((e) => e.keyId);
      expect(kids).toEqual([...Array(5).fill(first), ...Array(5).fill(second)]);
      // Another process opening the same file sees both keys.
      const reopened = FileAuditKeys.open(auditKeysFile(s.config), s.clock, { create: false });
      expect(reopened.current().kid).toBe(second);
      expect(await s.report(db)).toMatchObject({ ok: true, entries: 10 });
    } finally {
      await db.close();
    }
  });

  it('accepts entries written before links were keyed only inside the sealed legacy prefix', async () => {
    const s = await auditSetup();
    const db = await openPglite(undefined, TEST_PGLITE);
    try {
      await migrate(db, auditMigrations);
      let prev = GENESIS_HASH;
      for (let i = 0; i < 4; i++) {
        const e = entry(i);
        const hash = legacyHash(i + 1, prev, e);
        await db.query(
          `INSERT INTO agent_audit_log (${COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,NULL,$11)`,
          [
            i + 1,
            e.at,
            e.traceId,
            e.method,
            e.path,
            e.status,
            e.durationMs,
            e.identity,
            e.reason,
            prev,
            hash,
          ],
        );
        prev = hash;
      }
      expect(await s.report(db)).toMatchObject({ ok: false, seq: 1, kind: 'unkeyed' });
      s.checkpointer.sealLegacy({ seq: 4, hash: prev });
      const a = sqlAuditLog(db, log, { keys: s.keys });
      for (let i = 4; i < 8; i++) a.append(entry(i));
      await a.close();
      expect(await s.report(db)).toMatchObject({ ok: true, entries: 8, anchoredUpTo: 4 });
    } finally {
      await db.close();
    }
  });
});

describe('the signed head (head.jws)', () => {
  /** 30 entries written and sealed: a checkpoint at 20, the head at 30. */
  async function sealed() {
    const s = await auditSetup();
    const db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, auditMigrations);
    const a = sqlAuditLog(db, log, { keys: s.keys, onWritten: (h) => s.checkpointer.observe(h) });
    for (let i = 0; i < 20; i++) a.append(entry(i));
    await a.flush();
    await s.checkpointer.headSealed();
    expect(await s.checkpointer.seal()).toMatch(/checkpoint-0+20\.jws$/);
    for (let i = 20; i < 30; i++) a.append(entry(i));
    await a.close();
    await s.checkpointer.headSealed();
    const headFile = join(s.dir, HEAD_FILE);
    return { s, db, headFile, head: readFileSync(headFile, 'utf8') };
  }

  it('follows every committed batch, so entries cut off after the last checkpoint are reported', async () => {
    const { s, db } = await sealed();
    try {
      expect((await readCheckpoints(s.dir, s.signing)).head).toMatchObject({ seq: 30 });
      expect(await s.report(db)).toEqual({ ok: true, entries: 30, anchoredUpTo: 30, unanchored: 0 });
      await db.query('DELETE FROM agent_audit_log WHERE seq > 27');
      expect(await s.report(db)).toMatchObject({ ok: false, seq: 28, kind: 'truncated' });
    } finally {
      await s.checkpointer.close();
      await db.close();
    }
  });

  it('refuses a forged head (signed with another key) and a head rolled back to an older one', async () => {
    const { s, db, headFile } = await sealed();
    try {
      const other = await openCheckpointKeys(
        loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-other-')) }),
        s.clock,
      );
      const claims = (seq: number, hash: string) => ({
        iss: CHECKPOINT_ISSUER,
        seq,
        hash,
        at: s.clock.now(),
      });
      const rows = await readAudit(db, 1, 100);
      // Forged: the real head's claims, signed by a key that is not the checkpoint key.
      writeFileSync(headFile, `${signJws(other, CHECKPOINT_TYP, claims(30, rows[29]?.hash as string))}\n`);
      expect(await s.report(db)).toMatchObject({ ok: false, kind: 'checkpoint-invalid' });
      // Rolled back: a genuine older head (entry 15) put back, with the entries after it cut.
      writeFileSync(
        headFile,
        `${signJws(s.signing, CHECKPOINT_TYP, claims(15, rows[14]?.hash as string))}\n`,
      );
      await db.query('DELETE FROM agent_audit_log WHERE seq > 15');
      expect(await s.report(db)).toMatchObject({ ok: false, seq: 16, kind: 'head-rolled-back' });
    } finally {
      await s.checkpointer.close();
      await db.close();
    }
  });

  it('never moves back: a process started on a cut log keeps the head it found', async () => {
    const { s, db, headFile, head } = await sealed();
    try {
      await db.query('DELETE FROM agent_audit_log WHERE seq > 25');
      // A new process: the head it found (30) is where it starts; new entries 26… do not reseal below it.
      const restarted = createCheckpointer({
        dir: s.dir,
        keys: s.signing,
        clock: s.clock,
        everyMs: 3_600_000,
        log,
        signedSeq: 30,
      });
      const a = sqlAuditLog(db, log, { keys: s.keys, onWritten: (h) => restarted.observe(h) });
      for (let i = 0; i < 3; i++) a.append(entry(100 + i));
      await a.close();
      await restarted.close();
      expect(readFileSync(headFile, 'utf8')).toBe(head);
      // Entries 26–28 were written again with other content: the head's seal of 30 still stands.
      expect(await s.report(db)).toMatchObject({ ok: false, seq: 29, kind: 'truncated' });
    } finally {
      await s.checkpointer.close();
      await db.close();
    }
  });
});

describe('two gateway processes writing one chain (Postgres)', () => {
  it('keeps a single intact chain', async () => {
    const pg = await freshPostgres('audit2');
    const s = await auditSetup();
    const [db1, db2] = [await openPostgres(pg.url), await openPostgres(pg.url)];
    try {
      await migrate(db1, auditMigrations);
      const a = sqlAuditLog(db1, log, { keys: s.keys });
      const b = sqlAuditLog(db2, log, { keys: FileAuditKeys.open(auditKeysFile(s.config), s.clock) });
      for (let i = 0; i < 300; i++) (i % 2 ? a : b).append(entry(i));
      await Promise.all([a.flush(), b.flush()]);
      expect(await s.report(db1)).toMatchObject({ ok: true, entries: 300 });
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
  const cli = async (url: string, dataDir: string) => {
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'audit:verify'], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: `${e.stdout}${e.stderr}` };
    }
  };

  it('reports an intact log, the first broken link, and a missing tail after the last checkpoint', async () => {
    const pg = await freshPostgres('auditcli');
    const db = await openPostgres(pg.url);
    const s = await auditSetup();
    try {
      await migrate(db, auditMigrations);
      const a = sqlAuditLog(db, log, { keys: s.keys, onWritten: (h) => s.checkpointer.observe(h) });
      for (let i = 0; i < 25; i++) a.append(entry(i));
      await a.close();
      await s.checkpointer.close();
      const ok = await cli(pg.url, s.dataDir);
      expect(ok.code, ok.out).toBe(0);
      expect(ok.out).toContain('intact: 25 entries; the signed head seals entry 25, 0 after it');

      await db.query('DELETE FROM agent_audit_log WHERE seq > 20');
      const cut = await cli(pg.url, s.dataDir);
      expect(cut.code, cut.out).toBe(1);
      expect(cut.out).toContain('BROKEN at entry 21 (truncated)');

      await db.query('DELETE FROM agent_audit_log WHERE seq = 12');
      const broken = await cli(pg.url, s.dataDir);
      expect(broken.code).toBe(1);
      expect(broken.out).toContain('BROKEN at entry 12 (missing)');
    } finally {
      await db.close();
      await pg.drop();
    }
  }, 120_000);
});

/**
 * Audit proofs (issue 31, docs/audit-proofs.md): what an inclusion or consistency proof costs
 * for a log of 10k and of 100k entries. In memory, the tree alone (lib/merkle); then the whole
 * answer of GET …/audit-proof without HTTP (flush, catch-up with the store, the order's entries
 * by index, their proofs, the cached signed tree head) on the embedded store (PGlite, in
 * memory) holding that many entries; and the catch-up a first proof after a start pays (the
 * whole log read and hashed once).
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ephemeralAuditKeys } from '../../gateway/agent/audit/keys.ts';
import { auditMigrations } from '../../gateway/agent/audit/migrations.ts';
import { auditProofs } from '../../gateway/agent/audit/proofs.ts';
import { readAudit, readTail, sqlAuditLog } from '../../gateway/agent/audit/sql.ts';
import { auditTree } from '../../gateway/agent/audit/tree.ts';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import { migrate, openDb } from '../../lib/db/index.ts';
import { createLogger } from '../../lib/logger.ts';
import { leafHash, MerkleTree, verifyInclusion } from '../../lib/merkle/index.ts';
import { FileQuoteKeyStore } from '../../lib/quote-token/index.ts';
import type { Scenario } from '../harness.ts';

const SIZES = [10_000, 100_000] as const;
/** One order in every thousand entries (the rest: other calls). */
const ORDER_EVERY = 1000;

function memoryTree(n: number): MerkleTree {
  const t = new MerkleTree();
  for (let i = 0; i < n; i++) t.append(leafHash(`leaf ${i}`));
  return t;
}

/** An embedded store (PGlite in memory) holding an audit log of n entries. */
async function storeWith(n: number) {
  const dir = mkdtempSync(join(tmpdir(), 'ac-bench-proof-'));
  const config = loadConfig({ DATA_DIR: dir, EMBEDDED_DB: 'memory', LOG_LEVEL: 'silent' });
  const db = await openDb(config);
  await migrate(db, auditMigrations);
  const log = sqlAuditLog(db, createLogger(config), { keys: ephemeralAuditKeys() });
  const orderOf = (i: number) => `ord_${(Math.floor(i / ORDER_EVERY) + 1).toString(16).padStart(32, '0')}`;
  for (let i = 0; i < n; i++) {
    log.append({
      at: Date.now(),
      traceId: `trace-${i}`,
      method: i % ORDER_EVERY === 0 ? 'POST' : 'GET',
      path: '/api/v2/procurement/orders/:id',
      status: i % ORDER_EVERY === 0 ? 201 : 200,
      durationMs: 1.25,
      identity: 'spiffe://example.org/ns/ai/sa/procurement-agent/bench',
      reason: 'ok',
      identitySource: 'proxy',
      orderId: i % ORDER_EVERY === 0 ? orderOf(i) : null,
    });
    if (i % 5000 === 4999) await log.flush();
  }
  await log.flush();
  const source = {
    read: (from: number, limit: number) => readAudit(db, from, limit),
    tail: () => readTail(db),
  };
  const signing = await FileQuoteKeyStore.open(join(dir, 'keys.json'), systemClock, {
    retentionMs: Number.POSITIVE_INFINITY,
  });
  return {
    db,
    log,
    source,
    signing,
    orders: Math.ceil(n / ORDER_EVERY),
    orderOf: (k: number) => orderOf(k * ORDER_EVERY),
  };
}

export const scenarios: Scenario[] = [
  ...SIZES.flatMap((n): Scenario[] => [
    {
      kind: 'fn',
      group: 'audit-proof',
      name: `inclusion proof, tree of ${n / 1000}k leaves in memory`,
      async setup() {
        const t = memoryTree(n);
        return { run: () => t.inclusion(randomInt(n), n).map((h) => Buffer.from(h).toString('hex')) };
      },
    },
    {
      kind: 'fn',
      group: 'audit-proof',
      name: `consistency proof m < ${n / 1000}k, in memory`,
      async setup() {
        const t = memoryTree(n);
        return { run: () => t.consistency(1 + randomInt(n - 1), n) };
      },
    },
    {
      kind: 'fn',
      group: 'audit-proof',
      name: `verify an inclusion proof (offline), ${n / 1000}k`,
      async setup() {
        const t = memoryTree(n);
        const root = t.root();
        const i = randomInt(n);
        const path = t.inclusion(i);
        const leaf = leafHash(`leaf ${i}`);
        return { run: () => verifyInclusion(i, n, leaf, path, root) };
      },
    },
    {
      kind: 'fn',
      group: 'audit-proof',
      name: `an order's audit proof (service, PGlite), log of ${n / 1000}k`,
      iterations: 2000,
      async setup() {
        const s = await storeWith(n);
        const proofs = auditProofs({
          log: s.log,
          tree: auditTree(s.source),
          keys: s.signing,
          clock: systemClock,
        });
        await proofs.forOrder(s.orderOf(0)); // the catch-up, once
        return {
          run: () => proofs.forOrder(s.orderOf(randomInt(s.orders))),
          close: () => s.db.close(),
        };
      },
    },
    {
      kind: 'fn',
      group: 'audit-proof',
      name: `tree catch-up after a start (whole log), ${n / 1000}k`,
      iterations: 3,
      async setup() {
        const s = await storeWith(n);
        return { run: () => auditTree(s.source).sync(), close: () => s.db.close() };
      },
    },
  ]),
];

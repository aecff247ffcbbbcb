/**
 * The agent gateway's audit log as mountAgentGateway opens it (../index.ts): in memory with
 * ORDER_STORE=memory, else in the SQL store with its keys and checkpoints in files, its Merkle
 * proofs and the public keys a verifier needs served at AUDIT_KEYS_PATH.
 */
import type { FastifyInstance } from 'fastify';
import { migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import type { AgentMetrics } from '../metrics.ts';
import {
  type Checkpointer,
  checkpointDir,
  createCheckpointer,
  openCheckpointKeys,
  readCheckpoints,
} from './checkpoint.ts';
import { auditKeysFile, FileAuditKeys } from './keys.ts';
import type { AuditLog } from './log.ts';
import { memoryAuditLog } from './memory.ts';
import { auditMigrations } from './migrations.ts';
import { type AuditProofs, auditProofs } from './proofs.ts';
import { readAudit, readTail, sqlAuditLog } from './sql.ts';
import { auditTree } from './tree.ts';
import { AUDIT_KEYS_PATH } from './tree-head.ts';
import { type AuditReport, verifyAuditLog } from './verify.ts';

/** The audit log, its check and (from the SQL store only) its proofs. */
export interface MountedAudit {
  readonly audit: AuditLog;
  readonly verifyAudit: () => Promise<AuditReport>;
  readonly proofs?: AuditProofs;
}

type CheckpointKeys = Awaited<ReturnType<typeof openCheckpointKeys>>;

export async function mountAudit(
  app: FastifyInstance,
  platform: Platform,
  watched: AgentMetrics,
): Promise<MountedAudit> {
  if (platform.config.ORDER_STORE !== 'memory') return mountSqlAudit(app, platform, watched);
  const memory = memoryAuditLog();
  return { audit: memory, verifyAudit: () => memory.verify() };
}

async function mountSqlAudit(
  app: FastifyInstance,
  platform: Platform,
  watched: AgentMetrics,
): Promise<MountedAudit> {
  const { config, clock, log } = platform;
  await migrate(platform.db, auditMigrations);
  // Link keys and checkpoint keys live in files, never in the database the log is in.
  const keys = FileAuditKeys.open(auditKeysFile(config), clock);
  const checkpointKeys = await openCheckpointKeys(config, clock);
  const checkpoints = await openCheckpoints(platform, watched, checkpointKeys);
  const sql = sqlAuditLog(platform.db, log, { keys, onWritten: (head) => checkpoints.observe(head) });
  platform.onClose(async () => {
    await sql.close();
    await checkpoints.close();
  });
  // The public keys of head.jws, the checkpoints and the tree heads: what a verifier needs.
  app.get(AUDIT_KEYS_PATH, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=60').send(checkpointKeys.jwks()),
  );
  return {
    audit: sql,
    verifyAudit: async () =>
      verifyAuditLog(platform.db, {
        keyOf: (kid) => keys.keyOf(kid),
        checkpoints: await readCheckpoints(checkpointDir(config), checkpointKeys),
      }),
    // The Merkle tree over the log (docs/audit-proofs.md), built on the first proof asked for.
    proofs: auditProofs({
      log: sql,
      tree: auditTree({
        read: (from, limit) => readAudit(platform.db, from, limit),
        tail: () => readTail(platform.db),
      }),
      keys: checkpointKeys,
      clock,
    }),
  };
}

/** The checkpointer, from the signed head on disk and the log's stored tail. */
async function openCheckpoints(
  platform: Platform,
  watched: AgentMetrics,
  checkpointKeys: CheckpointKeys,
): Promise<Checkpointer> {
  const { config, clock, log } = platform;
  const tail = await readTail(platform.db);
  // The signed head never moves back: a log that ends before it was cut while this process
  // was down (or by someone since); say so at once, verify reports the missing entries.
  const signedSeq = (await readCheckpoints(checkpointDir(config), checkpointKeys)).head?.seq ?? 0;
  watched.truncatedAtStart(tail.seq < signedSeq);
  if (tail.seq < signedSeq)
    log.error(
      { logEndsAt: tail.seq, signedHead: signedSeq },
      `audit log truncated: it ends at entry ${tail.seq} but the signed head is entry ${signedSeq}`,
    );
  const checkpoints = createCheckpointer({
    dir: checkpointDir(config),
    keys: checkpointKeys,
    clock,
    everyMs: config.AUDIT_CHECKPOINT_EVERY_MS,
    headEveryMs: config.AUDIT_HEAD_EVERY_MS,
    log,
    signedSeq,
  });
  // Entries written before links were keyed are sealed as they are, once.
  if (!tail.keyed) checkpoints.sealLegacy(tail);
  return checkpoints;
}

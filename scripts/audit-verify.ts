/**
 * `npm run audit:verify`: checks the agent gateway's audit log and reports the first problem:
 * a broken link (an entry altered, removed, reordered, or the chain rewritten without the link
 * key), a head or checkpoint file that does not verify, a rolled-back head, an entry that
 * differs from what the head or a checkpoint sealed, or `truncated` (entries cut off the end,
 * with the first missing seq). Exit 0 intact, 1 broken,
 * 2 error. Reads the store the configuration names: DATABASE_URL (Postgres), else the
 * embedded store under DATA_DIR, which must not be open in a running server at the same time
 * (PGlite is a single-process database); the link keys from AUDIT_KEYS_FILE and the checkpoints
 * from AUDIT_CHECKPOINT_DIR, checked with the keys of AUDIT_CHECKPOINT_KEYS_FILE (defaults
 * under DATA_DIR). Nothing is created or changed.
 */
import '../lib/source-maps.ts';
import { existsSync } from 'node:fs';
import {
  checkpointDir,
  checkpointKeysFile,
  openCheckpointKeys,
  readCheckpoints,
} from '../gateway/agent/audit/checkpoint.ts';
import { auditKeysFile, FileAuditKeys } from '../gateway/agent/audit/keys.ts';
import { verifyAuditLog } from '../gateway/agent/audit/verify.ts';
import { systemClock } from '../lib/clock.ts';
import { loadConfig } from '../lib/config.ts';
import { openDb } from '../lib/db/index.ts';

const config = loadConfig();
const db = await openDb(config);
try {
  // to_regclass follows search_path, so a schema-scoped DATABASE_URL is honoured.
  const found = await db.query<{ t: string | null }>("SELECT to_regclass('agent_audit_log')::text AS t");
  if (!found[0]?.t) {
    console.log('audit log empty: no agent_audit_log table yet');
    process.exitCode = 0;
  } else {
    const keyFile = auditKeysFile(config);
    const keys = existsSync(keyFile)
      ? FileAuditKeys.open(keyFile, systemClock, { create: false })
      : undefined;
    if (!keys) console.error(`no link key file at ${keyFile}: keyed entries cannot be verified`);
    const checkpointKeys = existsSync(checkpointKeysFile(config))
      ? await openCheckpointKeys(config, systemClock)
      : { verificationKey: async () => undefined };
    const checkpoints = await readCheckpoints(checkpointDir(config), checkpointKeys);
    const r = await verifyAuditLog(db, { keyOf: (kid) => keys?.keyOf(kid), checkpoints });
    if (r.ok) {
      console.log(
        `audit log intact: ${r.entries} entries; the signed head seals entry ${r.anchoredUpTo}, ${r.unanchored} after it` +
          ` (${checkpoints.head ? 'head.jws and ' : ''}${checkpoints.valid.length} checkpoints in ${checkpointDir(config)})`,
      );
      if (r.entries > 0 && !checkpoints.head)
        console.error(
          'warning: no signed head (head.jws) found: entries removed from the end could not be detected',
        );
    } else console.error(`audit log BROKEN at entry ${r.seq} (${r.kind}): ${r.problem}`);
    process.exitCode = r.ok ? 0 : 1;
  }
} catch (err) {
  console.error(`audit verification failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  await db.close();
}

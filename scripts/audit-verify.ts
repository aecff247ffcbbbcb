/**
 * `npm run audit:verify`: checks the agent gateway's hash-chained audit log and reports the
 * first broken link (an altered, removed or reordered entry). Exit 0 intact, 1 broken, 2 error.
 * Reads the store the configuration names: DATABASE_URL (Postgres), else the embedded store
 * under DATA_DIR, which must not be open in a running server at the same time (PGlite is a
 * single-process database).
 */
import '../lib/source-maps.ts';
import { verifyAuditLog } from '../gateway/agent/audit/verify.ts';
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
    const r = await verifyAuditLog(db);
    if (r.ok) console.log(`audit log intact: ${r.entries} entries`);
    else console.error(`audit log BROKEN at entry ${r.seq}: ${r.problem}`);
    process.exitCode = r.ok ? 0 : 1;
  }
} catch (err) {
  console.error(`audit verification failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  await db.close();
}

/**
 * The audit tail cut off after a crash (issue 21): the embedded system takes agent calls until
 * it is killed with SIGKILL, then the last audit rows are deleted from its store, as someone with
 * access to the database (but not to the signed head beside the keys) could. `npm run
 * audit:verify` and the operator API must both report `truncated`, naming the first missing
 * entry; the restarted process says so in its log at once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointDir, openCheckpointKeys, readCheckpoints } from '../../gateway/agent/audit/checkpoint.ts';
import { auditKeysFile, FileAuditKeys } from '../../gateway/agent/audit/keys.ts';
import { verifyAuditLog } from '../../gateway/agent/audit/verify.ts';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import { openDb } from '../../lib/db/index.ts';
import { op } from '../operator/support.ts';
import { freshAgent, post, validOrder } from '../procurement/support/agent.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'ac-audit-cut-'));
const env = { DATA_DIR: dataDir, CATALOG_SIZE: '200', AUDIT_CHECKPOINT_EVERY_MS: '1000' };
const config = loadConfig(env);
const procs: ServiceProcess[] = [];

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
});

/** What the store and the signed head say, read the way audit:verify reads them. */
async function inspect(cut?: (seq: number) => string) {
  const db = await openDb(config);
  try {
    const keys = FileAuditKeys.open(auditKeysFile(config), systemClock, { create: false });
    const checkpoints = await readCheckpoints(
      checkpointDir(config),
      await openCheckpointKeys(config, systemClock),
    );
    const max = Number(
      (await db.query<{ n: string | null }>('SELECT max(seq) AS n FROM agent_audit_log'))[0]?.n,
    );
    if (cut) await db.query(cut(checkpoints.head?.seq ?? 0));
    const report = await verifyAuditLog(db, { keyOf: (kid) => keys.keyOf(kid), checkpoints });
    return { max, head: checkpoints.head?.seq ?? 0, report };
  } finally {
    await db.close();
  }
}

describe('audit log cut off after kill -9 of the embedded system', () => {
  it('is reported as truncated, with the first missing entry, by audit:verify and the operator API', async () => {
    const first = await startProcess('embedded', env, 90_000);
    procs.push(first);
    // Agent calls from four clients: orders (201), refusals (422) and throttles (429) all audited.
    let stop = false;
    const calls = Array.from({ length: 4 }, async (_, c) => {
      let n = 0;
      while (!stop) {
        const body = n++ % 5 === 4 ? JSON.stringify(validOrder({ quantity: 0 })) : undefined;
        await post(first.url, { spiffe: freshAgent(`cut-${c}`), ...(body ? { body } : {}) }).catch(() => {});
      }
    });
    await new Promise((r) => setTimeout(r, 2500));
    await first.kill();
    stop = true;
    await Promise.all(calls);

    // Intact after the crash: every sealed entry is there, the head trails the log at most.
    const before = await inspect();
    expect(before.head).toBeGreaterThan(20);
    expect(before.max).toBeGreaterThanOrEqual(before.head);
    expect(before.report).toMatchObject({ ok: true, anchoredUpTo: before.head });

    // The last ten sealed entries (and anything after them) deleted from the store.
    const missing = before.head - 9;
    const after = await inspect(() => `DELETE FROM agent_audit_log WHERE seq >= ${missing}`);
    expect(after.report).toMatchObject({ ok: false, seq: missing, kind: 'truncated' });

    const run = promisify(execFile);
    const cli = await run('npm', ['run', '--silent', 'audit:verify'], {
      cwd: root,
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
    }).then(
      () => ({ code: 0, out: '' }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        code: e.code,
        out: `${e.stdout}${e.stderr}`,
      }),
    );
    expect(cli.code, cli.out).toBe(1);
    expect(cli.out).toContain(`BROKEN at entry ${missing} (truncated)`);

    const second = await startProcess('embedded', env, 90_000);
    procs.push(second);
    expect(second.output()).toContain(`audit log truncated: it ends at entry ${missing - 1}`);
    const token = await mintDevToken(config, { subject: 'ops-auditor', roles: ['audit:read'] });
    const r = await op(second.url, '/api/v2/operator/audit/verify', { token });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: false, first_broken: { seq: missing, kind: 'truncated' } });
  }, 240_000);
});

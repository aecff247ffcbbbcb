import type { Queryable } from '../../../lib/db/index.ts';
import type { CheckpointRead } from './checkpoint.ts';
import { type BreakKind, GENESIS_HASH, verifyEntries } from './entry.ts';
import { readAudit } from './sql.ts';

const PAGE = 2000;

export type AuditProblemKind = BreakKind | 'checkpoint-invalid' | 'checkpoint-mismatch' | 'tail-missing';

export type AuditReport =
  | {
      readonly ok: true;
      readonly entries: number;
      /** The newest sealed seq (0: no checkpoint yet). */
      readonly anchoredUpTo: number;
      /** Entries after the newest checkpoint: their removal from the end is not detectable yet. */
      readonly unanchored: number;
    }
  | {
      readonly ok: false;
      /** The first entry concerned (for a missing tail: the first missing entry). */
      readonly seq: number;
      readonly kind: AuditProblemKind;
      readonly problem: string;
    };

export interface AuditVerifyOptions {
  /** The link key with this id (keys.ts), undefined when unknown. */
  readonly keyOf: (kid: string) => Buffer | undefined;
  /** The checkpoints found outside the table, already checked for their signatures. */
  readonly checkpoints: CheckpointRead;
}

/**
 * Verifies the stored chain against its keys and its checkpoints, page by page, and reports
 * the first problem:
 * - a broken link (an entry altered, removed, reordered, or rewritten without the link key);
 * - a checkpoint file that does not verify (tampered or forged);
 * - an entry whose link differs from the one a checkpoint sealed (the chain was rewritten);
 * - a missing tail: a checkpoint sealed entry N but the log ends before N (entries cut off).
 */
export async function verifyAuditLog(db: Queryable, opts: AuditVerifyOptions): Promise<AuditReport> {
  const [badFile] = opts.checkpoints.invalid;
  if (badFile)
    return {
      ok: false,
      seq: 0,
      kind: 'checkpoint-invalid',
      problem: `checkpoint ${badFile.file} does not verify (${badFile.reason})`,
    };
  const sealed = new Map<number, CheckpointRead['valid'][number]>();
  for (const c of opts.checkpoints.valid) if (c.seq > 0) sealed.set(c.seq, c);
  const legacyUntil = Math.max(0, ...opts.checkpoints.valid.map((c) => c.legacyUntil ?? 0));
  const newest = opts.checkpoints.valid.reduce((m, c) => Math.max(m, c.seq), 0);

  let start = { seq: 0, hash: GENESIS_HASH };
  let total = 0;
  for (;;) {
    const page = await readAudit(db, start.seq + 1, PAGE);
    // A removed entry leaves a gap: the page then starts later than start.seq + 1.
    const check = verifyEntries(page, { keyOf: opts.keyOf, legacyUntil }, start);
    if (!check.ok) return check;
    for (const e of page) {
      const c = sealed.get(e.seq);
      if (c && c.hash !== e.hash)
        return {
          ok: false,
          seq: e.seq,
          kind: 'checkpoint-mismatch',
          problem: `entry ${e.seq} is not the one sealed by ${c.file} at ${new Date(c.at).toISOString()} (the chain was rewritten)`,
        };
    }
    total += check.entries;
    const last = page[page.length - 1];
    if (last) start = { seq: last.seq, hash: last.hash };
    if (!last || page.length < PAGE) break;
  }
  if (start.seq < newest) {
    const c = sealed.get(newest);
    return {
      ok: false,
      seq: start.seq + 1,
      kind: 'tail-missing',
      problem: `the log ends at entry ${start.seq} but ${c?.file ?? 'a checkpoint'} sealed entry ${newest}: entries ${start.seq + 1}–${newest} were removed`,
    };
  }
  return { ok: true, entries: total, anchoredUpTo: newest, unanchored: start.seq - newest };
}

import type { Queryable } from '../../../lib/db/index.ts';
import type { CheckpointRead } from './checkpoint.ts';
import { type BreakKind, GENESIS_HASH, verifyEntries } from './entry.ts';
import { readAudit } from './sql.ts';

const PAGE = 2000;

export type AuditProblemKind =
  | BreakKind
  | 'checkpoint-invalid'
  | 'checkpoint-mismatch'
  | 'head-rolled-back'
  | 'truncated';

export type AuditReport =
  | {
      readonly ok: true;
      readonly entries: number;
      /** The newest sealed seq: the signed head's (0: nothing sealed yet). */
      readonly anchoredUpTo: number;
      /** Entries after the signed head (written since its last write): their removal from the end is not detectable yet. */
      readonly unanchored: number;
    }
  | {
      readonly ok: false;
      /** The first entry concerned (truncated: the first missing entry). */
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
 * Verifies the stored chain against its keys, its signed head and its checkpoints, page by
 * page, and reports the first problem:
 * - a broken link (an entry altered, removed, reordered, or rewritten without the link key);
 * - a checkpoint or head file that does not verify (tampered or forged);
 * - a signed head older than a checkpoint (an earlier head.jws put back: rolled back);
 * - an entry whose link differs from the one the head or a checkpoint sealed (rewritten);
 * - truncated: the head (or a checkpoint) sealed entry N but the log ends before N (entries cut
 *   off the end, e.g. deleted after a crash), with the first missing seq.
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
  const { head } = opts.checkpoints;
  const newestCheckpoint = opts.checkpoints.valid.reduce((m, c) => Math.max(m, c.seq), 0);
  if (head && head.seq < newestCheckpoint)
    return {
      ok: false,
      seq: head.seq + 1,
      kind: 'head-rolled-back',
      problem: `the signed head ${head.file} seals entry ${head.seq}, older than a checkpoint of entry ${newestCheckpoint}: an earlier head was put back`,
    };
  const sealed = new Map<number, CheckpointRead['valid'][number]>();
  for (const c of opts.checkpoints.valid) if (c.seq > 0) sealed.set(c.seq, c);
  if (head && head.seq > 0) sealed.set(head.seq, head);
  const legacyUntil = Math.max(0, ...opts.checkpoints.valid.map((c) => c.legacyUntil ?? 0));
  const newest = Math.max(newestCheckpoint, head?.seq ?? 0);

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
      kind: 'truncated',
      problem: `truncated: the log ends at entry ${start.seq} but ${c?.file ?? 'the signed head'} sealed entry ${newest}: entries ${start.seq + 1}–${newest} were removed`,
    };
  }
  return { ok: true, entries: total, anchoredUpTo: newest, unanchored: start.seq - newest };
}

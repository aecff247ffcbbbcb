import type { Queryable } from '../../../lib/db/index.ts';
import { type ChainCheck, GENESIS_HASH, verifyEntries } from './entry.ts';
import { readAudit } from './sql.ts';

const PAGE = 2000;

/** Verifies the whole stored chain page by page; the first broken link is reported. */
export async function verifyAuditLog(db: Queryable): Promise<ChainCheck> {
  let start = { seq: 0, hash: GENESIS_HASH };
  let total = 0;
  for (;;) {
    const page = await readAudit(db, start.seq + 1, PAGE);
    // A removed entry leaves a gap: the page then starts later than start.seq + 1.
    const check = verifyEntries(page, start);
    if (!check.ok) return check;
    total += check.entries;
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) return { ok: true, entries: total };
    start = { seq: last.seq, hash: last.hash };
  }
}

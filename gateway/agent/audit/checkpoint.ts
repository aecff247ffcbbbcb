import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compactVerify } from 'jose';
import type { Clock } from '../../../lib/clock.ts';
import type { Config } from '../../../lib/config.ts';
import { mkdirDurably, replaceFileDurably, writeFileDurably } from '../../../lib/durable-file.ts';
import type { Logger } from '../../../lib/logger.ts';
import { FileQuoteKeyStore, type QuoteKeys, signJws } from '../../../lib/quote-token/index.ts';

/**
 * Signed heads of the audit chain, kept outside the audit table, in the spirit of Certificate
 * Transparency's signed tree heads (RFC 9162) and CloudTrail's digest files. The chain head (its
 * seq and link) is sealed into an ES256 JWS, made with the quote tokens' key machinery (its own
 * key ring file, keys kept for ever), and written to a directory (DATA_DIR/audit-checkpoints, or
 * a mounted volume / synced bucket) that the database's operators cannot write:
 *
 * - `head.jws`, the latest signed head, rewritten after committed batches (off the request
 *   path: entries are written after their responses, and the head after its batch; one write
 *   at a time, each taking the newest head, and at most one per `headEveryMs`). It only moves
 *   forward.
 * - `checkpoint-<seq>.jws` every few seconds, of the head already in `head.jws`: a history, so
 *   a rewritten chain is caught at an older seq too, and an older `head.jws` put back (a
 *   rolled-back head) is caught against them.
 *
 * Whoever can write the table cannot forge either, so cutting entries off the end (after a
 * crash too), or rewriting the chain with the link key, is reported by `npm run audit:verify`.
 */
export const CHECKPOINT_TYP = 'audit-checkpoint+jws';
export const CHECKPOINT_ISSUER = 'agent-commerce/agent-audit';

export interface CheckpointClaims {
  readonly iss: string;
  /** The sealed entry: the chain had at least `seq` entries, and entry `seq`'s link was `hash`. */
  readonly seq: number;
  readonly hash: string;
  /** Epoch ms of sealing. */
  readonly at: number;
  /** Entries up to this seq were written before links were keyed (accepted unkeyed). */
  readonly legacyUntil?: number;
}

export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

export const checkpointDir = (config: Pick<Config, 'AUDIT_CHECKPOINT_DIR' | 'DATA_DIR'>): string =>
  config.AUDIT_CHECKPOINT_DIR ?? join(config.DATA_DIR, 'audit-checkpoints');

export const checkpointKeysFile = (config: Pick<Config, 'AUDIT_CHECKPOINT_KEYS_FILE' | 'DATA_DIR'>): string =>
  config.AUDIT_CHECKPOINT_KEYS_FILE ?? join(config.DATA_DIR, 'keys', 'audit-checkpoint.json');

/** The checkpoint key ring: the quote-token store, with retired keys kept for ever. */
export const openCheckpointKeys = (
  config: Pick<Config, 'AUDIT_CHECKPOINT_KEYS_FILE' | 'DATA_DIR'>,
  clock: Clock,
): Promise<FileQuoteKeyStore> =>
  FileQuoteKeyStore.open(checkpointKeysFile(config), clock, { retentionMs: Number.POSITIVE_INFINITY });

const FILE = /^(checkpoint|legacy)-(\d{20})\.jws$/;
/** The latest signed head. */
export const HEAD_FILE = 'head.jws';
const fileName = (kind: 'checkpoint' | 'legacy', seq: number) =>
  `${kind}-${String(seq).padStart(20, '0')}.jws`;

/** Writes one checkpoint atomically and durably (temporary file, then rename). Returns its path. */
export function writeCheckpoint(
  dir: string,
  keys: Pick<QuoteKeys, 'signingKey'>,
  claims: CheckpointClaims,
): string {
  const file = join(dir, fileName(claims.legacyUntil === undefined ? 'checkpoint' : 'legacy', claims.seq));
  writeFileDurably(file, `${signJws(keys, CHECKPOINT_TYP, claims)}\n`, { mode: 0o644 });
  return file;
}

/**
 * As writeCheckpoint, without blocking the loop: the tick's checkpoint is written while requests
 * are served, and a synchronous fsync there stalled the request thread for up to 163 ms (session
 * 52, 20 writes at load ~7). `dir` exists: head.jws, written first, made it.
 */
async function writeCheckpointAsync(
  dir: string,
  keys: Pick<QuoteKeys, 'signingKey'>,
  claims: CheckpointClaims,
): Promise<string> {
  const file = join(dir, fileName('checkpoint', claims.seq));
  await replaceFileDurably(file, `${signJws(keys, CHECKPOINT_TYP, claims)}\n`, 0o644);
  return file;
}

const LINK = /^[0-9a-f]{64}$/;

function claimsOf(payload: Uint8Array): CheckpointClaims | undefined {
  const c = JSON.parse(Buffer.from(payload).toString('utf8')) as Partial<CheckpointClaims>;
  const intAtLeast0 = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  if (c.iss !== CHECKPOINT_ISSUER || !intAtLeast0(c.seq) || !LINK.test(String(c.hash)) || !intAtLeast0(c.at))
    return undefined;
  if (c.legacyUntil !== undefined && !intAtLeast0(c.legacyUntil)) return undefined;
  return c as CheckpointClaims;
}

export interface CheckpointRead {
  /** Checkpoints whose signature verified, by seq. */
  readonly valid: readonly (CheckpointClaims & { readonly file: string })[];
  /** The latest signed head (head.jws) when there is one and it verified. */
  readonly head?: CheckpointClaims & { readonly file: string };
  /** Files that are not checkpoints we signed: tampered, forged or damaged. */
  readonly invalid: readonly { readonly file: string; readonly reason: string }[];
}

/** Reads and verifies every checkpoint in `dir` (a missing directory holds none). */
export async function readCheckpoints(
  dir: string,
  keys: Pick<QuoteKeys, 'verificationKey'>,
): Promise<CheckpointRead> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => FILE.test(n) || n === HEAD_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { valid: [], invalid: [] };
    throw err;
  }
  const valid: (CheckpointClaims & { file: string })[] = [];
  const invalid: { file: string; reason: string }[] = [];
  let head: (CheckpointClaims & { file: string }) | undefined;
  for (const name of names.sort()) {
    const file = join(dir, name);
    try {
      const { payload, protectedHeader } = await compactVerify(
        readFileSync(file, 'utf8').trim(),
        async (header) => {
          const key = header.kid ? await keys.verificationKey(header.kid) : undefined;
          if (!key) throw new Error(`unknown signing key ${String(header.kid)}`);
          return key;
        },
        { algorithms: ['ES256'] },
      );
      if (protectedHeader.typ !== CHECKPOINT_TYP)
        throw new Error(`not a checkpoint (typ ${protectedHeader.typ})`);
      const claims = claimsOf(payload);
      if (!claims) throw new Error('claims are not a checkpoint');
      if (name === HEAD_FILE) {
        head = { ...claims, file };
        continue;
      }
      if (Number(FILE.exec(name)?.[2]) !== claims.seq) throw new Error('file name and sealed seq differ');
      valid.push({ ...claims, file });
    } catch (err) {
      invalid.push({ file, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  valid.sort((a, b) => a.seq - b.seq);
  return { valid, invalid, ...(head ? { head } : {}) };
}

/**
 * Writes the latest signed head atomically and durably (temporary file, then rename), without
 * blocking the loop. `made`: the directory was made by an earlier write, so no mkdir (a removed directory
 * fails the write, which is tried again with `made` false).
 */
async function writeHead(
  dir: string,
  keys: Pick<QuoteKeys, 'signingKey'>,
  claims: CheckpointClaims,
  made: boolean,
) {
  if (!made) mkdirDurably(dir);
  await replaceFileDurably(join(dir, HEAD_FILE), `${signJws(keys, CHECKPOINT_TYP, claims)}\n`, 0o644);
}

export interface Checkpointer {
  /** The chain head after a batch was committed: head.jws follows it (see headSealed). */
  observe(head: ChainHead): void;
  /** Resolves when head.jws holds every head observed so far (or its write failed). */
  headSealed(): Promise<void>;
  /**
   * Writes a checkpoint file of the signed head now if it moved since the last one (durable when
   * it resolves; one at a time). Resolves to its path, or undefined when nothing was written.
   */
  seal(): Promise<string | undefined>;
  /** Seals the head of entries written before links were keyed (once, at start). */
  sealLegacy(head: ChainHead): string;
  close(): Promise<void>;
}

/**
 * Keeps head.jws on the newest committed head, and writes a checkpoint file of it every
 * `everyMs` when it moved.
 *
 * `headEveryMs` (AUDIT_HEAD_EVERY_MS) spaces the head writes: a write starts at most that long
 * after the previous one started, so the signed head trails the committed log by that much plus
 * one write, at most. Each write is an ES256 signature and four file operations on the request
 * thread's loop; measured, rewriting it after every batch was 11 % of that thread under ACP
 * completions (docs/performance.md "The audit head, spaced"). 0 writes after every batch. The
 * models keep far longer windows (Certificate Transparency's merge delay is 24 h, CloudTrail's
 * digest files are hourly); close() writes at once, without waiting.
 *
 * `signedSeq` is what head.jws held at start: the head never moves back below it (a log cut
 * while the process was down is reported, not re-sealed). A failure to write is logged and tried
 * again with the next batch or the next checkpoint tick (the entries stay verifiable by their
 * links meanwhile).
 */
export function createCheckpointer(o: {
  dir: string;
  keys: Pick<QuoteKeys, 'signingKey'>;
  clock: Clock;
  everyMs: number;
  /** The least time between the starts of two head writes (0: after every batch). */
  headEveryMs?: number;
  log: Logger;
  signedSeq?: number;
}): Checkpointer {
  const headEveryMs = o.headEveryMs ?? 0;
  /** performance.now() when the last head write started. */
  let lastWrite = Number.NEGATIVE_INFINITY;
  let made = false;
  let closing = false;
  /** Ends the wait before the next head write at once (close). */
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      // Unref'd: a pending head write does not keep an exiting process alive (close() writes it).
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms).unref();
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });
  let observed: ChainHead | undefined;
  /** What head.jws holds (written by this process). */
  let signed: ChainHead | undefined;
  let signedSeq = o.signedSeq ?? 0;
  let checkpointed = 0;
  let writing: Promise<void> | undefined;
  const claims = (h: ChainHead, legacyUntil?: number): CheckpointClaims => ({
    iss: CHECKPOINT_ISSUER,
    seq: h.seq,
    hash: h.hash,
    at: o.clock.now(),
    ...(legacyUntil === undefined ? {} : { legacyUntil }),
  });
  // One head write at a time, each taking the newest observed head after its wait, so a burst
  // of batches costs one write per headEveryMs, not one per batch.
  const signHead = (): Promise<void> => {
    if (writing || !observed || observed.seq <= signedSeq) return writing ?? Promise.resolve();
    // The loop runs at least once (checked above), so `writing` is set before it is cleared.
    writing = (async () => {
      try {
        while (observed && observed.seq > signedSeq) {
          const wait = lastWrite + headEveryMs - performance.now();
          if (wait > 0 && !closing) await pause(wait);
          const h = observed;
          lastWrite = performance.now();
          await writeHead(o.dir, o.keys, claims(h), made);
          made = true;
          signed = h;
          signedSeq = h.seq;
        }
      } catch (err) {
        made = false;
        o.log.error({ err }, 'audit head not signed; trying again with the next batch');
      } finally {
        writing = undefined;
      }
    })();
    return writing;
  };
  // A checkpoint seals what head.jws already holds, so head.jws is never behind a checkpoint
  // unless it was put back by someone (verify reports that).
  let sealing: Promise<unknown> | undefined;
  const seal = async (): Promise<string | undefined> => {
    while (sealing) await sealing;
    if (!signed || signed.seq <= checkpointed) return undefined;
    const h = signed;
    const run = writeCheckpointAsync(o.dir, o.keys, claims(h)).then(
      (file) => {
        checkpointed = Math.max(checkpointed, h.seq);
        return file;
      },
      (err: unknown) => {
        o.log.error({ err }, 'audit checkpoint not written; trying again at the next tick');
        return undefined;
      },
    );
    sealing = run;
    try {
      return await run;
    } finally {
      sealing = undefined;
    }
  };
  // Each tick also tries a head write that failed (signHead does nothing when head.jws is current).
  const timer = setInterval(() => {
    void signHead();
    void seal();
  }, o.everyMs);
  timer.unref();
  return {
    observe(h) {
      if (observed && h.seq <= observed.seq) return;
      observed = h;
      void signHead();
    },
    async headSealed() {
      while (writing) await writing;
    },
    seal,
    sealLegacy: (h) => writeCheckpoint(o.dir, o.keys, claims(h, h.seq)),
    async close() {
      clearInterval(timer);
      closing = true;
      wake?.();
      await signHead();
      await seal();
    },
  };
}

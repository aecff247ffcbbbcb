import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compactVerify } from 'jose';
import type { Clock } from '../../../lib/clock.ts';
import type { Config } from '../../../lib/config.ts';
import type { Logger } from '../../../lib/logger.ts';
import { FileQuoteKeyStore, type QuoteKeys, signJws } from '../../../lib/quote-token/index.ts';

/**
 * Signed checkpoints of the audit chain, kept outside the audit table: every few seconds the
 * chain head (its seq and link) is sealed into an ES256 JWS, made with the quote tokens' key
 * machinery (its own key ring file, keys kept for ever), and written as a file to a directory
 * (DATA_DIR/audit-checkpoints, or a mounted volume / synced bucket). Whoever can write the
 * table cannot forge one, so cutting entries off the end, or rewriting the chain with the link
 * key, is caught at the next checkpoint by `npm run audit:verify`.
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
const fileName = (kind: 'checkpoint' | 'legacy', seq: number) =>
  `${kind}-${String(seq).padStart(20, '0')}.jws`;

/** Writes one checkpoint atomically (temporary file, then rename). Returns its path. */
export function writeCheckpoint(
  dir: string,
  keys: Pick<QuoteKeys, 'signingKey'>,
  claims: CheckpointClaims,
): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, fileName(claims.legacyUntil === undefined ? 'checkpoint' : 'legacy', claims.seq));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${signJws(keys, CHECKPOINT_TYP, claims)}\n`, { mode: 0o644 });
  renameSync(tmp, file);
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
    names = readdirSync(dir).filter((n) => FILE.test(n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { valid: [], invalid: [] };
    throw err;
  }
  const valid: (CheckpointClaims & { file: string })[] = [];
  const invalid: { file: string; reason: string }[] = [];
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
      if (Number(FILE.exec(name)?.[2]) !== claims.seq) throw new Error('file name and sealed seq differ');
      valid.push({ ...claims, file });
    } catch (err) {
      invalid.push({ file, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  valid.sort((a, b) => a.seq - b.seq);
  return { valid, invalid };
}

export interface Checkpointer {
  /** The chain head after a batch was committed. */
  observe(head: ChainHead): void;
  /** Seals the newest observed head now if it moved since the last checkpoint. */
  seal(): string | undefined;
  /** Seals the head of entries written before links were keyed (once, at start). */
  sealLegacy(head: ChainHead): string;
  close(): void;
}

/**
 * Seals the chain head every `everyMs` when it moved. A failure to write is logged and tried
 * again at the next tick (the entries stay verifiable by their links meanwhile).
 */
export function createCheckpointer(o: {
  dir: string;
  keys: Pick<QuoteKeys, 'signingKey'>;
  clock: Clock;
  everyMs: number;
  log: Logger;
}): Checkpointer {
  let head: ChainHead | undefined;
  let sealed = 0;
  const write = (h: ChainHead, legacyUntil?: number) =>
    writeCheckpoint(o.dir, o.keys, {
      iss: CHECKPOINT_ISSUER,
      seq: h.seq,
      hash: h.hash,
      at: o.clock.now(),
      ...(legacyUntil === undefined ? {} : { legacyUntil }),
    });
  const seal = () => {
    if (!head || head.seq <= sealed) return undefined;
    try {
      const file = write(head);
      sealed = head.seq;
      return file;
    } catch (err) {
      o.log.error({ err }, 'audit checkpoint not written; trying again at the next tick');
      return undefined;
    }
  };
  const timer = setInterval(seal, o.everyMs);
  timer.unref();
  return {
    observe(h) {
      if (!head || h.seq > head.seq) head = h;
    },
    seal,
    sealLegacy: (h) => write(h, h.seq),
    close() {
      clearInterval(timer);
      seal();
    },
  };
}

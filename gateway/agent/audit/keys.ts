import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../../lib/clock.ts';
import type { Config } from '../../../lib/config.ts';
import { readKeyFile, writeKeyFile } from '../../../lib/quote-token/key-file.ts';
import type { LinkKey } from './entry.ts';

/**
 * The audit chain's HMAC keys, held outside the database: a JSON key ring file (a secret
 * volume in production; default DATA_DIR/keys/audit-hmac.json), written the same way as the
 * quote-token key ring. Rotation adds a key that links new entries from then on; every key
 * ever used is kept, because an entry is verified for as long as it is stored.
 */
export interface StoredLinkKey {
  readonly kid: string;
  /** 32 random bytes, base64url. */
  readonly secret: string;
  readonly createdAt: number;
  readonly retiredAt?: number;
}

interface LinkKeyRing {
  readonly keys: readonly StoredLinkKey[];
}

export interface AuditKeys {
  /** The key new links are made with. */
  current(): LinkKey;
  /** Any key ever used, by id. */
  keyOf(kid: string): Buffer | undefined;
}

/** How often a process looks for a rotation made by another process (the file's mtime). */
const RELOAD_EVERY_MS = 5_000;

export const auditKeysFile = (config: Pick<Config, 'AUDIT_KEYS_FILE' | 'DATA_DIR'>): string =>
  config.AUDIT_KEYS_FILE ?? join(config.DATA_DIR, 'keys', 'audit-hmac.json');

const newKey = (nowMs: number): StoredLinkKey => ({
  kid: `hk_${randomBytes(8).toString('hex')}`,
  secret: randomBytes(32).toString('base64url'),
  createdAt: nowMs,
});

export class FileAuditKeys implements AuditKeys {
  private secrets = new Map<string, Buffer>();
  private active: LinkKey | undefined;
  private mtimeMs = 0;
  private checkedAt = 0;

  private constructor(
    readonly file: string,
    private readonly clock: Clock,
  ) {}

  /**
   * Opens the ring, creating it with one key when absent (never overwriting another process's);
   * `create: false` (the verifier) fails instead.
   */
  static open(file: string, clock: Clock, opts: { create?: boolean } = {}): FileAuditKeys {
    const keys = new FileAuditKeys(file, clock);
    try {
      statSync(file);
    } catch (missing) {
      if (opts.create === false) throw missing;
      try {
        writeKeyFile(file, { keys: [newKey(clock.now())] } satisfies LinkKeyRing, true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    keys.reload();
    return keys;
  }

  reload(): void {
    this.checkedAt = this.clock.now();
    const mtimeMs = statSync(this.file).mtimeMs;
    if (mtimeMs === this.mtimeMs && this.active) return;
    const ring = readKeyFile<LinkKeyRing>(this.file);
    const secrets = new Map(ring.keys.map((k) => [k.kid, Buffer.from(k.secret, 'base64url')] as const));
    const current = ring.keys
      .filter((k) => k.retiredAt === undefined)
      .sort((a, b) => b.createdAt - a.createdAt)[0];
    const secret = current && secrets.get(current.kid);
    if (!current || !secret || secret.length < 32)
      throw new Error(`audit key file ${this.file} has no active key of 32 bytes`);
    this.secrets = secrets;
    this.active = { kid: current.kid, secret };
    this.mtimeMs = mtimeMs;
  }

  current(): LinkKey {
    if (this.clock.now() - this.checkedAt >= RELOAD_EVERY_MS) {
      try {
        this.reload();
      } catch {
        // Keep linking with the key we have; the next check tries again.
      }
    }
    if (!this.active) throw new Error('audit keys are not open');
    return this.active;
  }

  keyOf(kid: string): Buffer | undefined {
    if (!this.secrets.has(kid)) {
      try {
        this.reload();
      } catch {}
    }
    return this.secrets.get(kid);
  }

  /** A new key links new entries; the others stay for verification. Returns the new kid. */
  rotate(): string {
    const now = this.clock.now();
    const ring = readKeyFile<LinkKeyRing>(this.file);
    const fresh = newKey(now);
    const keys = ring.keys.map((k) => (k.retiredAt === undefined ? { ...k, retiredAt: now } : k));
    writeKeyFile(this.file, { keys: [...keys, fresh] } satisfies LinkKeyRing, false);
    this.mtimeMs = 0;
    this.reload();
    return fresh.kid;
  }
}

/** Keys in memory only (ORDER_STORE=memory, benchmarks): the HMAC is still computed. */
export function ephemeralAuditKeys(): AuditKeys {
  const key: LinkKey = { kid: 'hk_ephemeral', secret: randomBytes(32) };
  return { current: () => key, keyOf: (kid) => (kid === key.kid ? key.secret : undefined) };
}

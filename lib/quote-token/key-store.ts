import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { statSync } from 'node:fs';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import { type Clock, systemClock } from '../clock.ts';
import { readKeyFile, writeKeyFile } from './key-file.ts';
import {
  activeKey,
  type KeyRing,
  nextSigningChange,
  publicJwks,
  QUOTE_KEY_RETENTION_MS,
  rotateRing,
  type StoredKey,
  verifyingKeys,
} from './keyring.ts';

const readRing = (file: string): KeyRing => readKeyFile<KeyRing>(file);

export const QUOTE_TOKEN_ALG = 'ES256';
/** How often a process looks for a rotation made by another process (the key file's mtime). */
const RELOAD_EVERY_MS = 5_000;
/** An unknown kid re-reads the file at most this often, so junk kids cannot cause a read storm. */
const UNKNOWN_KID_RELOAD_MS = 1_000;

/** What signing and verification need from the keys, whatever stores them. */
export interface QuoteKeys {
  /** A Node KeyObject: signing is synchronous (no WebCrypto job per token). */
  signingKey(): { kid: string; key: KeyObject };
  /** The public key for `kid`, or undefined when no current key has that id. */
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  jwks(): { keys: JWK[] };
}

export async function newStoredKey(nowMs: number): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(QUOTE_TOKEN_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return {
    // RFC 7638 thumbprint: the same key gets the same kid in every process.
    kid: await calculateJwkThumbprint(publicJwk),
    privateJwk: await exportJWK(privateKey),
    publicJwk,
    createdAt: nowMs,
  };
}

/**
 * Quote-token keys in a JSON file (DATA_DIR for the embedded topology, QUOTE_TOKEN_KEYS_FILE
 * on a shared secret volume for replicas). Created with one key on first use. Rotation writes
 * the file; other processes see it within RELOAD_EVERY_MS, and at once when a token names a kid
 * they do not know yet.
 */
export class FileQuoteKeyStore implements QuoteKeys {
  private ring: KeyRing = { keys: [] };
  private mtimeMs = 0;
  private checkedAt = 0;
  private unknownKidAt = Number.NEGATIVE_INFINITY;
  private readonly imported = new Map<string, { priv: KeyObject; pub: CryptoKey }>();
  private active: { kid: string; key: KeyObject } | undefined;
  /** When a pending key of the ring starts signing (re-evaluated then, without a file change). */
  private activeUntil = Number.POSITIVE_INFINITY;

  private constructor(
    readonly file: string,
    private readonly clock: Clock,
    private readonly retentionMs: number,
  ) {}

  /**
   * `retentionMs`: how long a retired key keeps verifying (a quote token's lifetime by default;
   * the audit's checkpoint keys pass Infinity, as a checkpoint is checked for ever).
   */
  static async open(
    file: string,
    clock: Clock = systemClock,
    opts: { retentionMs?: number } = {},
  ): Promise<FileQuoteKeyStore> {
    const store = new FileQuoteKeyStore(file, clock, opts.retentionMs ?? QUOTE_KEY_RETENTION_MS);
    try {
      statSync(file);
    } catch {
      try {
        writeKeyFile(file, { keys: [await newStoredKey(clock.now())] }, true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    await store.reload();
    return store;
  }

  /** Re-reads the file if it changed. */
  async reload(): Promise<void> {
    this.checkedAt = this.clock.now();
    const mtimeMs = statSync(this.file).mtimeMs;
    if (mtimeMs === this.mtimeMs && this.active) return;
    const ring = readRing(this.file);
    for (const k of ring.keys) {
      if (this.imported.has(k.kid)) continue;
      this.imported.set(k.kid, {
        priv: createPrivateKey({ key: k.privateJwk as JsonWebKey, format: 'jwk' }),
        pub: (await importJWK(k.publicJwk, QUOTE_TOKEN_ALG)) as CryptoKey,
      });
    }
    this.selectSigningKey(ring);
    this.ring = ring;
    this.mtimeMs = mtimeMs;
  }

  private selectSigningKey(ring: KeyRing): void {
    const now = this.clock.now();
    const current = activeKey(ring, now);
    const keys = current ? this.imported.get(current.kid) : undefined;
    if (!current || !keys) throw new Error(`quote-token key file ${this.file} has no active key`);
    this.active = { kid: current.kid, key: keys.priv };
    this.activeUntil = nextSigningChange(ring, now);
  }

  private reloadSoon(): void {
    if (this.clock.now() - this.checkedAt < RELOAD_EVERY_MS) return;
    this.checkedAt = this.clock.now();
    this.reload().catch(() => {
      // Keep signing with the keys we have; the next check tries again.
    });
  }

  signingKey(): { kid: string; key: KeyObject } {
    this.reloadSoon();
    if (!this.active) throw new Error('quote-token key store is not open');
    if (this.clock.now() >= this.activeUntil) this.selectSigningKey(this.ring);
    return this.active;
  }

  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    this.reloadSoon();
    const now = this.clock.now();
    const known = () => verifyingKeys(this.ring, now, this.retentionMs).some((k) => k.kid === kid);
    if (!known() && now - this.unknownKidAt >= UNKNOWN_KID_RELOAD_MS) {
      this.unknownKidAt = now;
      await this.reload().catch(() => undefined);
    }
    return known() ? this.imported.get(kid)?.pub : undefined;
  }

  jwks(): { keys: JWK[] } {
    this.reloadSoon();
    return publicJwks(this.ring, this.clock.now(), this.retentionMs);
  }

  /**
   * A new signing key, published at once and signing after `publishForMs` (0: at once); the
   * previous one signs until then and keeps verifying until its tokens expire. Returns the new kid.
   */
  async rotate(publishForMs = 0): Promise<string> {
    const now = this.clock.now();
    const fresh = await newStoredKey(now);
    writeKeyFile(
      this.file,
      rotateRing(readRing(this.file), fresh, now, this.retentionMs, publishForMs),
      false,
    );
    this.mtimeMs = 0;
    await this.reload();
    return fresh.kid;
  }
}

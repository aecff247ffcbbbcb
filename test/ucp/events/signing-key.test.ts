/**
 * The business's UCP signing key: an ES256 (P-256) key ring under DATA_DIR (or
 * UCP_SIGNING_KEYS_FILE), published as public JWKs with a kid for the profile's signing_keys.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/clock.ts';
import { FileQuoteKeyStore } from '../../../lib/quote-token/key-store.ts';
import {
  UCP_KEY_RETENTION_MS,
  ucpPublicJwks,
  ucpRequestKeys,
  ucpSigningKeys,
  ucpSigningKeysFile,
} from '../../../subgraphs/procurement/webhooks/ucp-signing-key.ts';
import { expectUcp } from '../support/validate.ts';

const dataDir = () => mkdtempSync(join(tmpdir(), 'ucp-key-'));

describe('the UCP signing key', () => {
  it('lives in DATA_DIR/keys/ucp-signing.json unless UCP_SIGNING_KEYS_FILE says otherwise', () => {
    expect(ucpSigningKeysFile({ DATA_DIR: '/d', UCP_SIGNING_KEYS_FILE: undefined })).toBe(
      '/d/keys/ucp-signing.json',
    );
    expect(ucpSigningKeysFile({ DATA_DIR: '/d', UCP_SIGNING_KEYS_FILE: '/s/k.json' })).toBe('/s/k.json');
  });

  it('is created on first use, owner-only, and published as a public P-256 JWK with its thumbprint as kid', async () => {
    const config = { DATA_DIR: dataDir(), UCP_SIGNING_KEYS_FILE: undefined };
    const [jwk, ...more] = await ucpPublicJwks(config);
    expect(more).toEqual([]);
    expectUcp('signing_key', jwk);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    expect(jwk).not.toHaveProperty('d');
    const { kid, ...key } = jwk as Record<string, string>;
    expect(kid).toBe(await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x, y: key.y }));
    expect(statSync(ucpSigningKeysFile(config)).mode & 0o777).toBe(0o600);
    // The signer's key is the published one.
    const signing = (await ucpSigningKeys(config)).signingKey();
    expect(signing.kid).toBe(kid);
    expect(createPublicKey(signing.key).export({ format: 'jwk' })).toMatchObject({ x: key.x, y: key.y });
  });

  it('is the same key for every process that reads the same file', async () => {
    const config = { DATA_DIR: dataDir(), UCP_SIGNING_KEYS_FILE: undefined };
    const mine = await ucpPublicJwks(config);
    // Another process: its own store over the same file.
    const other = await FileQuoteKeyStore.open(ucpSigningKeysFile(config), undefined, {
      retentionMs: UCP_KEY_RETENTION_MS,
    });
    expect(other.jwks().keys).toEqual(mine);
  });

  it('keeps a rotated-out key in signing_keys for the 7-day grace period, then drops it', async () => {
    const clock = new ManualClock(Date.parse('2026-04-09T00:00:00Z'));
    const file = join(dataDir(), 'ring.json');
    const ring = await FileQuoteKeyStore.open(file, clock, { retentionMs: UCP_KEY_RETENTION_MS });
    const old = ring.signingKey().kid;
    const fresh = await ring.rotate();
    expect(ring.signingKey().kid).toBe(fresh);
    expect(
      ring
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([old, fresh].sort());
    clock.advance(UCP_KEY_RETENTION_MS + 1000);
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([fresh]);
  });

  it('npm run ucp-keys -- rotate --publish-for publishes the new key at once and signs with the old one meanwhile', async () => {
    const DATA_DIR = dataDir();
    const config = { DATA_DIR, UCP_SIGNING_KEYS_FILE: undefined };
    const [old] = await ucpPublicJwks(config);
    const run = (...args: string[]) =>
      execFileSync('npx', ['tsx', 'scripts/ucp-keys.ts', ...args], {
        cwd: new URL('../../../', import.meta.url),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
      });
    expect(run('rotate', '--publish-for', '3600')).toMatch(/published now, signs in 3600 s/);
    const other = await FileQuoteKeyStore.open(ucpSigningKeysFile(config), undefined, {
      retentionMs: UCP_KEY_RETENTION_MS,
    });
    expect(other.jwks().keys).toHaveLength(2);
    expect(other.signingKey().kid).toBe(old?.kid);
    expect(JSON.parse(run('jwks')).map((k: { kid: string }) => k.kid)).toEqual(
      other.jwks().keys.map((k) => k.kid),
    );
  }, 60_000);

  it('on the request path: no look at the file per signature, a rotation seen within 5 s, a kid another process rotated in at once', async () => {
    const clock = new ManualClock(Date.parse('2026-11-30T00:00:00Z'));
    const config = { DATA_DIR: dataDir(), UCP_SIGNING_KEYS_FILE: undefined };
    const keys = ucpRequestKeys(config, clock);
    const first = await keys.signingKey();
    // Another process rotates: this one keeps signing with the key it holds until its reload is due.
    const other = await FileQuoteKeyStore.open(ucpSigningKeysFile(config), clock, {
      retentionMs: UCP_KEY_RETENTION_MS,
    });
    const second = await other.rotate();
    clock.advance(4_000);
    expect((await keys.signingKey()).kid).toBe(first.kid);
    expect((await keys.verifyingKeys()).map((k) => k.kid)).not.toContain(second);
    clock.advance(1_001);
    await keys.signingKey(); // the reload is due: it runs behind this call
    await new Promise((r) => setTimeout(r, 20));
    expect((await keys.signingKey()).kid).toBe(second);
    // A checkout signed there with a key rotated in since is verified here at once: the kid asked for is read in.
    const third = await other.rotate();
    expect((await keys.verifyingKeys()).map((k) => k.kid)).not.toContain(third);
    expect((await keys.verifyingKeys(third)).map((k) => k.kid)).toEqual(
      expect.arrayContaining([first.kid, second, third]),
    );
  });
});

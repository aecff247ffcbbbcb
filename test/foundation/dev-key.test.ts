/**
 * The development caller key under DATA_DIR is created once, whoever asks first: processes of a
 * distributed topology started together on one DATA_DIR must all verify each other's tokens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { devSigningKey } from '../../lib/auth/jwt.ts';

describe('the development caller key', () => {
  it('is the same key for every concurrent first use of an empty DATA_DIR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ac-dev-key-'));
    const keys = await Promise.all(Array.from({ length: 8 }, () => devSigningKey(dir)));
    const first = JSON.stringify(keys[0]?.publicJwk);
    expect(keys.map((k) => JSON.stringify(k.publicJwk))).toEqual(keys.map(() => first));
    expect(JSON.stringify((await devSigningKey(dir)).publicJwk)).toBe(first);
  });
});

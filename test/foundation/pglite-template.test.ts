/**
 * EMBEDDED_DB_TEMPLATE (lib/db/pglite.ts): a new store is loaded from a tarball of a newly
 * initialised data directory instead of running initdb. It must be the same store initdb makes
 * (the settings, an empty database), each store its own copy, and a data directory made from it
 * a normal one that opens later without the template.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite, templateTarball } from '../../lib/db/pglite.ts';
import { openPgliteWorker } from '../../lib/db/pglite-worker.ts';
import { testStoreWorker } from './support/pglite-worker-source.ts';

const dir = mkdtempSync(join(tmpdir(), 'ac-template-'));
const template = join(dir, 'cache', 'pglite.tar');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded store from a template tarball', () => {
  it('makes the template on first use, then loads each new store from it, each its own copy', async () => {
    const first = await openPglite(undefined, { template });
    const made = statSync(template);
    expect(made.size).toBeGreaterThan(1_000_000);
    await first.exec('CREATE TABLE only_in_first (n int)');
    const second = await openPglite(undefined, { template });
    try {
      // Not made again, and the first store's table is not in the second.
      expect(statSync(template).mtimeMs).toBe(made.mtimeMs);
      expect(await second.query("SELECT to_regclass('only_in_first')::text AS t")).toEqual([{ t: null }]);
      // The settings of lib/db/pglite.ts (PGLITE_CONF), as initdb's store has them.
      expect(await second.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '8MB' }]);
      expect(
        await second.query('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', ['public']),
      ).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  }, 120_000);

  it('makes a new data directory from it that opens again without the template, with its data', async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const db = await openPglite(data, { template });
    await db.exec('CREATE TABLE kept (n int)');
    await db.query('INSERT INTO kept VALUES (42)');
    await db.close();
    const again = await openPglite(data);
    try {
      expect(await again.query('SELECT n FROM kept')).toEqual([{ n: 42 }]);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('hands PGlite the tarball bytes as a Blob that reads like an ordinary one', async () => {
    await openPglite(undefined, { template }).then((db) => db.close());
    const bytes = readFileSync(template);
    const blob = templateTarball(template);
    const plain = new Blob([bytes]);
    expect(blob).toBeInstanceOf(Blob);
    expect(blob.size).toBe(bytes.byteLength);
    expect(Buffer.from(await blob.arrayBuffer()).equals(bytes)).toBe(true);
    // The stores opened from it share the bytes, and opening one leaves them as the file holds them.
    const again = await openPglite(undefined, { template });
    await again.close();
    expect(Buffer.from(await templateTarball(template).arrayBuffer()).equals(bytes)).toBe(true);
    const part = blob.slice(100, 612);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 612))).toBe(true);
    expect((await blob.slice(0, 512).text()) === (await plain.slice(0, 512).text())).toBe(true);
    const chunks: Uint8Array[] = [];
    for await (const chunk of blob.stream()) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  }, 120_000);

  it('loads the store of the worker thread from it too', async () => {
    const db = await openPgliteWorker(undefined, { template, spawn: testStoreWorker });
    try {
      expect(await db.query('SELECT 1 + 1 AS two')).toEqual([{ two: 2 }]);
      expect(await db.query('SHOW work_mem')).toEqual([{ work_mem: '2MB' }]);
    } finally {
      await db.close();
    }
  }, 120_000);
});

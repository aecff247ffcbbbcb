/**
 * The build's embedded store template (lib/db/pglite-template.ts, scripts/build.mjs): named by
 * PGlite's version and the store's settings, found beside the compiled code, kept across builds
 * with a stale one removed; openDb loads a new store from it when EMBEDDED_DB_TEMPLATE is not set
 * (lib/db/index.ts), and a store says how its data directory was made (Db.madeFrom): initdb
 * without a template, which a start from the sources still runs.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { openPglite, PGLITE_CONF } from '../../lib/db/pglite.ts';
import {
  makeShippedTemplate,
  shippedTemplate,
  shippedTemplateDir,
  templateFileName,
} from '../../lib/db/pglite-template.ts';

const dir = mkdtempSync(join(tmpdir(), 'ac-shipped-template-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = join(import.meta.dirname, '../..');
const compiled = process.env.TEST_COMPILED === '1';

describe("the build's embedded store template", () => {
  it("is named by PGlite's version and a digest of the store's settings", () => {
    const { version } = JSON.parse(
      readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'),
    ) as { version: string };
    const digest = createHash('sha256').update(PGLITE_CONF).digest('hex').slice(0, 12);
    expect(templateFileName()).toBe(`pglite-${version}-${digest}.tar`);
  });

  it("is found only when its file exists, and kept by the next build, which removes other templates but not another maker's partial file", () => {
    const shipped = join(dir, 'embedded-store');
    expect(shippedTemplate(shipped)).toBeUndefined();
    mkdirSync(shipped);
    // This build's template (its bytes do not matter here: it is not made again) and what an
    // earlier PGlite's build and a concurrent maker left.
    const current = join(shipped, templateFileName());
    writeFileSync(current, 'this build');
    const stale = 'pglite-0.0.1-000000000000.tar';
    const partial = `${templateFileName()}.123.456.partial`;
    writeFileSync(join(shipped, stale), 'old');
    writeFileSync(join(shipped, partial), 'being written');
    expect(shippedTemplate(shipped)).toBe(current);
    expect(makeShippedTemplate(shipped)).toBe(current);
    expect(readFileSync(current, 'utf8')).toBe('this build');
    expect(readdirSync(shipped).sort()).toEqual([templateFileName(), partial].sort());
  });

  it('says how a new data directory was made: initdb without a template (synced, reopened as it is), or the template', async () => {
    const data = mkdtempSync(join(dir, 'initdb-'));
    const db = await openPglite(data);
    expect(db.madeFrom).toBe('initdb');
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await db.close();
    expect(existsSync(join(data, 'pglite', 'PG_VERSION'))).toBe(true);
    const again = await openPglite(data, { template: process.env.EMBEDDED_DB_TEMPLATE });
    try {
      // An existing directory is opened as it is, template or not.
      expect(again.madeFrom).toBeUndefined();
      expect(await again.query('SELECT n FROM kept')).toEqual([{ n: 7 }]);
    } finally {
      await again.close();
    }
    const fromTemplate = await openPglite(mkdtempSync(join(dir, 'template-')), {
      template: process.env.EMBEDDED_DB_TEMPLATE,
    });
    try {
      expect(fromTemplate.madeFrom).toBe('template');
      expect(await fromTemplate.query("SELECT to_regclass('kept')::text AS t")).toEqual([{ t: null }]);
    } finally {
      await fromTemplate.close();
    }
  }, 120_000);

  it.runIf(compiled)(
    'is made by the build in dist/embedded-store/, where the compiled openDb loads a new store from it by default',
    async () => {
      const template = await import(pathToFileURL(join(root, 'dist/lib/db/pglite-template.js')).href);
      const made = join(root, 'dist/embedded-store', templateFileName());
      expect(existsSync(made)).toBe(true);
      expect(template.shippedTemplateDir()).toBe(join(root, 'dist/embedded-store/'));
      expect(template.shippedTemplate()).toBe(made);
      // From the sources there is no build beside the code: a start runs initdb (or the named template).
      expect(shippedTemplateDir()).toBe(join(root, 'embedded-store/'));
      const { openDb } = (await import(pathToFileURL(join(root, 'dist/lib/db/index.js')).href)) as {
        openDb: typeof import('../../lib/db/index.ts').openDb;
      };
      const config = loadConfig({ DATA_DIR: mkdtempSync(join(dir, 'default-')), EMBEDDED_DB_THREAD: 'main' });
      const db = await openDb({ ...config, EMBEDDED_DB_TEMPLATE: undefined });
      try {
        expect(db.madeFrom).toBe('template');
        expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        await db.close();
      }
    },
    120_000,
  );
});

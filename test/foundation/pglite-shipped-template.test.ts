/**
 * The build's embedded store template (lib/db/pglite-template.ts, scripts/build.mjs): named by
 * PGlite's version and the store's settings, found beside the compiled code, made once, and a
 * stale one (another name) removed when a new one is made. openDb loads a new store from it
 * when EMBEDDED_DB_TEMPLATE is not set (lib/db/index.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PGLITE_CONF } from '../../lib/db/pglite.ts';
import {
  makeShippedTemplate,
  shippedTemplate,
  shippedTemplateDir,
  templateFileName,
} from '../../lib/db/pglite-template.ts';

const dir = mkdtempSync(join(tmpdir(), 'ac-shipped-template-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = join(import.meta.dirname, '../..');

describe("the build's embedded store template", () => {
  it("is named by PGlite's version and a digest of the store's settings", () => {
    const { version } = JSON.parse(
      readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'),
    ) as { version: string };
    const digest = createHash('sha256').update(PGLITE_CONF).digest('hex').slice(0, 12);
    expect(templateFileName()).toBe(`pglite-${version}-${digest}.tar`);
  });

  it('is found only when its file exists, and made once with any stale template removed', () => {
    const shipped = join(dir, 'embedded-store');
    expect(shippedTemplate(shipped)).toBeUndefined();
    const made = makeShippedTemplate(shipped);
    expect(made).toBe(join(shipped, templateFileName()));
    expect(shippedTemplate(shipped)).toBe(made);
    expect(statSync(made).size).toBeGreaterThan(1_000_000);
    // A template of an earlier PGlite, left by an earlier build.
    const stale = join(shipped, 'pglite-0.0.1-000000000000.tar');
    writeFileSync(stale, 'old');
    const before = statSync(made).mtimeMs;
    expect(makeShippedTemplate(shipped)).toBe(made);
    // Kept (not made again), and the stale one gone.
    expect(statSync(made).mtimeMs).toBe(before);
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(shipped)).toEqual([templateFileName()]);
  }, 120_000);

  it('is made by the build in dist/embedded-store/, where the compiled code looks for it', async () => {
    // The suite's global setup built dist/ (TEST_COMPILED=1); without a build there is nothing to check.
    if (process.env.TEST_COMPILED !== '1') return;
    const compiled = (await import(
      pathToFileURL(join(root, 'dist/lib/db/pglite-template.js')).href
    )) as typeof import('../../lib/db/pglite-template.ts');
    expect(compiled.shippedTemplateDir()).toBe(join(root, 'dist/embedded-store/'));
    expect(compiled.shippedTemplate()).toBe(join(root, 'dist/embedded-store', templateFileName()));
    // From the sources there is no build beside the code: a start runs initdb (or the named template).
    expect(shippedTemplateDir()).toBe(join(root, 'embedded-store/'));
  });
});

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTemplate, PGLITE_CONF } from './pglite.ts';

/**
 * The template a new embedded store starts from (EMBEDDED_DB_TEMPLATE; pglite.ts,
 * `templateTarball`, `makeTemplate`): initdb's output for this PGlite and these settings, as a
 * tarball. A store loaded from it instead of running initdb opened in 2.1–3.3 s against 7.0–7.3 s
 * (docs/performance.md, "A new store from the build's template"), and every new replica of the
 * embedded system, every first start on a new DATA_DIR, opens one.
 *
 * The build makes it (scripts/build.mjs, `makeShippedTemplate`) beside the compiled code, in
 * dist/embedded-store/, so a release image carries it and no start pays initdb; a start that
 * finds none (run from the sources, or a build whose template could not be made) runs initdb
 * as before. Its name holds PGlite's version and a digest of the settings: a change of either
 * names another file, so a stale template is never loaded.
 */

/** PGlite's version, from the package.json above its entry (the package exports no ./package.json). */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('the @electric-sql/pglite package.json was not found');
    dir = up;
  }
}

/** `pglite-<version>-<settings digest>.tar`: the file name a template of this PGlite and these settings has. */
export function templateFileName(): string {
  const settings = createHash('sha256').update(PGLITE_CONF).digest('hex').slice(0, 12);
  return `pglite-${pgliteVersion()}-${settings}.tar`;
}

/** Where the build puts the template: dist/embedded-store/ (from the sources: embedded-store/ at the root, never made). */
export function shippedTemplateDir(): string {
  return fileURLToPath(new URL('../../embedded-store/', import.meta.url));
}

/**
 * The template the build made for this PGlite and these settings, or undefined when there is none
 * (or its name cannot be told: PGlite's package.json not found, as in a bundle): a start then runs
 * initdb rather than fail.
 */
export function shippedTemplate(dir = shippedTemplateDir()): string | undefined {
  try {
    const file = join(dir, templateFileName());
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes the shipped template (scripts/build.mjs, after the compile) unless it exists, and removes
 * the other templates of the directory (of an earlier PGlite or other settings; another maker's
 * `.partial` file, being written, is left). Returns its path.
 */
export function makeShippedTemplate(dir = shippedTemplateDir()): string {
  mkdirSync(dir, { recursive: true });
  const name = templateFileName();
  for (const f of readdirSync(dir))
    if (f !== name && /^pglite-.*\.tar$/.test(f)) rmSync(join(dir, f), { force: true });
  const file = join(dir, name);
  makeTemplate(file);
  return file;
}

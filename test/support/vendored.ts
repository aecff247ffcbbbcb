/**
 * A vendored standard's files against the SHA256SUMS beside them (schemas/acp, schemas/ucp):
 * each file unchanged, and no file that the list does not name but README.md and the list.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

export function vendoredChecksums(root: URL): void {
  const dir = fileURLToPath(root);
  const sums = readFileSync(join(dir, 'SHA256SUMS'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [hash, file] = line.split(/ {2}/) as [string, string];
      return { hash, file };
    });

  it.each(sums)('$file matches SHA256SUMS', ({ hash, file }) => {
    expect(
      createHash('sha256')
        .update(readFileSync(join(dir, file)))
        .digest('hex'),
    ).toBe(hash);
  });

  it('lists every vendored file in SHA256SUMS (only README.md and SHA256SUMS are ours)', () => {
    const walk = (d: string): string[] =>
      readdirSync(join(dir, d)).flatMap((f) =>
        statSync(join(dir, d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)],
      );
    const ours = new Set(['README.md', 'SHA256SUMS']);
    expect(
      walk('')
        .filter((f) => !ours.has(f))
        .sort(),
    ).toEqual(sums.map((s) => s.file).sort());
  });
}

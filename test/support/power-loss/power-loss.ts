/**
 * A simulated power loss for the tests: sync-shadow.c (LD_PRELOAD) records what each sync made
 * durable under a directory; `materialise` builds the directory a disk would hold after the
 * power was cut at that moment, so a test can start the system on it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./sync-shadow.c', import.meta.url));

/** Compiles the library once per call site (gcc from Debian, as the machine has). */
export function buildSyncShadow(): string {
  const out = join(mkdtempSync(join(tmpdir(), 'ac-sync-shadow-')), 'libsyncshadow.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-Wall', '-Werror', '-o', out, SOURCE, '-ldl']);
  return out;
}

/** The environment that makes a process record its syncs under `root` into `shadow`. */
export const syncShadowEnv = (library: string, root: string, shadow: string): Record<string, string> => ({
  LD_PRELOAD: library,
  SYNC_SHADOW_ROOT: root,
  SYNC_SHADOW_DIR: shadow,
});

type Entry = { type: 'd' | 'f'; key: string; name: string };
const entries = (shadow: string, key: string): Entry[] => {
  const file = join(shadow, 'dirs', key);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [type, k, name] = line.split('\t');
      return { type: type as 'd' | 'f', key: k as string, name: name as string };
    });
};

/**
 * Writes into `target` (a new, empty directory) what the disk held under the recorded root when
 * the power was cut: a directory's entries as of its last sync, a file's content as of its last
 * sync (empty when its entry is durable and its content never was).
 */
export function materialise(shadow: string, target: string): void {
  const rootKey = readFileSync(join(shadow, 'root.key'), 'utf8');
  if (!rootKey) throw new Error('sync-shadow recorded no root');
  const build = (key: string, dir: string) => {
    mkdirSync(dir, { recursive: true });
    for (const e of entries(shadow, key)) {
      const path = join(dir, e.name);
      if (e.type === 'd') build(e.key, path);
      else {
        const content = join(shadow, 'inodes', e.key);
        if (existsSync(content)) copyFileSync(content, path);
        else writeFileSync(path, '');
      }
    }
  };
  build(rootKey, target);
}

import { spawnSync } from 'node:child_process';

/**
 * Fails with the fix in the message when Debian's prometheus package is missing (its `promtool`
 * and `prometheus` binaries): `.ci/run` installs it; by hand, `apt-get install prometheus`.
 */
export function requirePrometheusBinary(name: 'promtool' | 'prometheus'): void {
  const r = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0)
    throw new Error(
      `${name} not found: install Debian's prometheus package (apt-get install prometheus; .ci/run does)`,
    );
}

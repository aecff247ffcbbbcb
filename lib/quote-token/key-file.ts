import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Key rings as JSON files readable by their owner only (a secret volume in production): the
 * quote-token and audit-checkpoint signing keys, the audit's HMAC keys. Shared by every store
 * so that all of them create and rotate a file the same safe way.
 */
export const readKeyFile = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

export function writeKeyFile(file: string, content: unknown, exclusive: boolean): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(content, null, 2), { mode: 0o600 });
  try {
    // First creation must not overwrite a ring another process just created (link fails on EEXIST);
    // a rotation replaces the file atomically.
    if (exclusive) linkSync(tmp, file);
    else renameSync(tmp, file);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

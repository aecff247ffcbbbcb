import { readFileSync } from 'node:fs';
import { writeFileDurably } from '../durable-file.ts';

/**
 * Key rings as JSON files readable by their owner only (a secret volume in production): the
 * quote-token and audit-checkpoint signing keys, the audit's HMAC keys. Shared by every store
 * so that all of them create and rotate a file the same safe way.
 */
export const readKeyFile = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/**
 * First creation must not overwrite a ring another process just created (`exclusive`: EEXIST);
 * a rotation replaces the file atomically. Durable when it returns: a key lost to a power loss
 * would leave the audit chain or issued tokens unverifiable.
 */
export function writeKeyFile(file: string, content: unknown, exclusive: boolean): void {
  writeFileDurably(file, JSON.stringify(content, null, 2), { mode: 0o600, exclusive });
}

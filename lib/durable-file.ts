import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Files that must survive a power loss once written (key rings, signed audit heads, the embedded
 * store's clean-stop mark): the content is synced before it gets its name, and the directory
 * after, as POSIX requires for a new or renamed entry to be durable. Written here because the
 * libraries made for atomic writes (write-file-atomic) sync the file but not its directory, and
 * none creates a name exclusively (link), which the key rings need.
 */

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** mkdir -p, and each directory it created made durable in its parent. */
export function mkdirDurably(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  // From the parent of the first directory created down to `dir`: each holds a new entry.
  let d = resolve(dir);
  const stop = dirname(resolve(first));
  const chain: string[] = [];
  while (d !== stop && d !== dirname(d)) {
    chain.push(d);
    d = dirname(d);
  }
  for (const c of [stop, ...chain.reverse()]) syncPath(c);
}

/**
 * Writes `file` whole or not at all (a temporary file, synced, then renamed or linked into
 * place), durable when this returns. `exclusive`: fails with EEXIST when `file` exists (link),
 * else replaces it atomically (rename).
 */
export function writeFileDurably(
  file: string,
  data: string | Uint8Array,
  { mode = 0o600, exclusive = false }: { mode?: number; exclusive?: boolean } = {},
): void {
  const dir = dirname(file);
  mkdirDurably(dir);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    if (exclusive) linkSync(tmp, file);
    else renameSync(tmp, file);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {}
  }
  syncPath(dir);
}

/** Removes `file` (absent is fine), durable when this returns. */
export function removeFileDurably(file: string): void {
  rmSync(file, { force: true });
  syncPath(dirname(file));
}

/**
 * As writeFileDurably (replacing, never exclusive), without blocking the event loop; the
 * directory must exist.
 */
export async function replaceFileDurably(file: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

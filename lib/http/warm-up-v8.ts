import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags held only while the warm-up runs (WARM_UP_V8_FLAGS, issue 48; docs/performance.md
 * "V8's tier-up during the warm-up"). V8 optimises a function once it has run enough
 * (`--interrupt-budget`: roughly the bytes of bytecode run between two of its profiler's ticks),
 * not once enough time has passed; a 2-s warm-up on a busy machine ran the per-request code too
 * few times, and ~200 functions were first optimised under the first callers' load. A smaller
 * budget while the warm-up runs compiles them before ready; at ready every flag goes back to the
 * value it had, so the steady state tiers up as V8 would without it.
 *
 * Node has no getter for a V8 flag, so what to put back is read from this Node's own
 * `--v8-options` (which prints each flag's value under this process's command line, as
 * `default: --name=value`), once, before the flags change. A flag set at run time by other code
 * (lib/db/pglite.ts's `--liftoff-only`) is not seen there: do not name one here.
 */

/** One `--name[=value]` or `--no-name` of a flag string. */
const FLAG = /^--(no-)?([a-z0-9][a-z0-9-_]*)(?:=(\S+))?$/;

/** The flags of a WARM_UP_V8_FLAGS value (space-separated), or the first one that is not a flag. */
export function parseV8Flags(text: string): { flags: string[] } | { bad: string } {
  const flags = text.split(/\s+/).filter(Boolean);
  const bad = flags.find((f) => !FLAG.test(f));
  return bad === undefined ? { flags } : { bad };
}

/** A flag's name, `_` and `-` alike (V8 takes both), without `--no-`. */
const nameOf = (flag: string): string => (FLAG.exec(flag)?.[2] ?? flag).replaceAll('_', '-');

/**
 * The flags that give each named flag back the value it has now, from `--v8-options` output:
 * `default: --interrupt-budget=67584`, `default: --no-maglev`, `default: --sparkplug`.
 */
export function restoringFlags(v8Options: string, names: readonly string[]): string[] {
  return names.map((given) => {
    const name = given.replaceAll('_', '-');
    const escaped = name.replaceAll('-', '[-_]');
    const m = new RegExp(`default: (--(?:no-)?${escaped}(?:=\\S*)?)\\s*$`, 'm').exec(v8Options);
    if (!m?.[1]) throw new Error(`V8 has no flag --${name} (node --v8-options)`);
    // A string flag prints its value quoted: `--maglev-filter="*"`.
    return m[1].replace(/="(.*)"$/, '=$1');
  });
}

/** This process's V8 flags as `--v8-options` prints them under its own command line. */
async function currentV8Options(): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, '--v8-options'], {
    maxBuffer: 8 * 1024 * 1024,
  });
  return stdout;
}

/**
 * Runs `body` with `flags` set in V8, then sets every one of them back to the value it had,
 * whether `body` resolved or threw. No flags: `body` alone. A flag this V8 does not have (a typo,
 * or one another Node's V8 dropped) sets none of them: `refused` is told, and `body` runs as
 * without flags, so a process is never left with a flag it cannot put back.
 */
export async function withV8Flags<T>(
  flags: readonly string[],
  body: () => Promise<T>,
  refused: (err: unknown) => void = () => {},
): Promise<T> {
  if (flags.length === 0) return body();
  let restore: string[];
  try {
    restore = restoringFlags(await currentV8Options(), [...new Set(flags.map(nameOf))]);
  } catch (err) {
    refused(err);
    return body();
  }
  for (const f of flags) setFlagsFromString(f);
  try {
    return await body();
  } finally {
    for (const f of restore) setFlagsFromString(f);
  }
}

/**
 * WARM_UP_V8_FLAGS (lib/http/warm-up-v8.ts): V8 flags held while the warm-up runs and put back at
 * ready. What is checked is what the flag does, not that a call was made: how many calls a fresh
 * function takes before V8 runs it optimised (TurboFan), read with `%GetOptimizationStatus` in a
 * child process started with `--allow-natives-syntax` (the system itself never is). Before the
 * flags, while they hold, and after they were put back; and put back to the value the command
 * line gave, not to V8's default.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { parseV8Flags, restoringFlags } from '../../lib/http/warm-up-v8.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Each probe is a new function (its own source, so no code is shared through V8's compilation
// cache), called until V8 has optimised it; the count of calls is the probe's result.
const PROBE = `
import { withV8Flags } from './lib/http/warm-up-v8.ts';
let k = 0;
const callsToOptimise = () => {
  k++;
  const f = new Function('x', 'let s = 0; for (let i = 0; i < 3; i++) s += (x * i) ^ ' + k + '; return s;');
  for (let i = 1; i <= 100000; i++) {
    f(i);
    if (i % 10 === 0 && (%GetOptimizationStatus(f) & 16) !== 0) return i;
  }
  return -1;
};
const flags = JSON.parse(process.argv.at(-1));
const before = callsToOptimise();
let during = 0;
let refused = null;
await withV8Flags(flags, async () => { during = callsToOptimise(); }, (err) => { refused = String(err); });
const after = callsToOptimise();
let thrown = 0;
await withV8Flags(flags, async () => { throw new Error('boom'); }).catch(() => {});
thrown = callsToOptimise();
console.log(JSON.stringify({ before, during, after, thrown, refused }));
`;

function probe(nodeFlags: string[], flags: string[]) {
  const r = spawnSync(
    process.execPath,
    [
      '--allow-natives-syntax',
      '--no-concurrent-recompilation',
      ...nodeFlags,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      PROBE,
      JSON.stringify(flags),
    ],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as {
    before: number;
    during: number;
    after: number;
    thrown: number;
    refused: string | null;
  };
}

describe('WARM_UP_V8_FLAGS', () => {
  it('a smaller interrupt budget optimises sooner while the warm-up runs, and is put back after', () => {
    const r = probe([], ['--interrupt-budget=2048']);
    expect(r.before).toBeGreaterThan(0);
    expect(r.during).toBeGreaterThan(0);
    expect(r.during * 4).toBeLessThan(r.before);
    expect(r.after).toBe(r.before);
    // Put back when the warm-up throws too.
    expect(r.thrown).toBe(r.before);
    expect(r.refused).toBeNull();
  });

  it("puts back the command line's value, not V8's default", () => {
    const r = probe(['--interrupt-budget=16384'], ['--interrupt-budget=2048']);
    const plain = probe([], []);
    // The command line's budget is a quarter of V8's default: its functions optimise sooner.
    expect(r.before * 2).toBeLessThan(plain.before);
    expect(r.during * 2).toBeLessThan(r.before);
    expect(r.after).toBe(r.before);
  });

  it('a flag this V8 does not have sets none of them, and the warm-up runs as without', () => {
    const r = probe([], ['--interrupt-budget=2048', '--surely-not-a-v8-flag=1']);
    expect(r.refused).toMatch(/no flag --surely-not-a-v8-flag/);
    expect(r.during).toBe(r.before);
    expect(r.after).toBe(r.before);
  });
});

// The same through readyWhenWarm, as a process runs it: the flags from the configuration while
// the warm-up runs, and back when /readyz's warm-up check passes.
const READY_PROBE = `
import Fastify from 'fastify';
import { readyWhenWarm } from './lib/http/warm-up.ts';
import { loadConfig } from './lib/config.ts';
${PROBE.split('const flags =')[0]?.split('\n').slice(2).join('\n')}
const config = loadConfig({ WARM_UP_MS: '50', WARM_UP_V8_FLAGS: process.env.PROBE_FLAGS });
const readiness = new Map();
const logged = [];
const log = { info: (o, m) => logged.push([o, m]), warn: (o, m) => logged.push([o, m]) };
const app = Fastify();
const before = callsToOptimise();
let during = 0;
readyWhenWarm(app, { config, readiness, log }, async () => {
  during = callsToOptimise();
  return { ms: 0, requests: 0, failed: 0 };
});
await app.ready();
for (;;) {
  try { await readiness.get('warm-up')(); break; } catch { await new Promise((r) => setTimeout(r, 5)); }
}
const after = callsToOptimise();
await app.close();
console.log(JSON.stringify({ before, during, after, logged: logged.map(([o, m]) => m + ' ' + (o.v8Flags ?? '')) }));
`;

describe('readyWhenWarm with WARM_UP_V8_FLAGS', () => {
  it('holds the flags while the warm-up runs and has put them back when it says ready', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--allow-natives-syntax',
        '--no-concurrent-recompilation',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        READY_PROBE,
      ],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, PROBE_FLAGS: '--interrupt-budget=2048' },
      },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '');
    expect(out.during * 4).toBeLessThan(out.before);
    expect(out.after).toBe(out.before);
    expect(out.logged).toEqual(['warmed up --interrupt-budget=2048']);
  });
});

describe('the flags and their values', () => {
  const options = [
    '  --interrupt-budget (interrupt budget which should be used for the profiler counter)',
    '        type: int  default: --interrupt-budget=67584',
    '  --maglev (enable the maglev optimizing compiler)',
    '        type: bool  default: --no-maglev',
    '  --maglev-filter (optimization filter for the maglev compiler)',
    '        type: string  default: --maglev-filter="*"',
    '  --sparkplug (enable Sparkplug baseline compiler)',
    '        type: bool  default: --sparkplug',
  ].join('\n');

  it('reads what to put back from --v8-options', () => {
    expect(restoringFlags(options, ['interrupt-budget', 'maglev', 'maglev-filter', 'sparkplug'])).toEqual([
      '--interrupt-budget=67584',
      '--no-maglev',
      '--maglev-filter=*',
      '--sparkplug',
    ]);
    // `_` and `-` are one to V8; a flag whose name starts like another's is not taken for it.
    expect(restoringFlags(options, ['interrupt_budget'])).toEqual(['--interrupt-budget=67584']);
    expect(() => restoringFlags(options, ['interrupt'])).toThrow(/no flag --interrupt/);
  });

  it('takes space-separated flags and names the first that is not one', () => {
    expect(parseV8Flags('  --interrupt-budget=8192   --no-maglev ')).toEqual({
      flags: ['--interrupt-budget=8192', '--no-maglev'],
    });
    expect(parseV8Flags('')).toEqual({ flags: [] });
    expect(parseV8Flags('--interrupt-budget=8192 interrupt-budget')).toEqual({ bad: 'interrupt-budget' });
  });

  it('is empty by default, and the configuration refuses what is not a flag, naming it', () => {
    expect(loadConfig({}).WARM_UP_V8_FLAGS).toBe('');
    expect(loadConfig({ WARM_UP_V8_FLAGS: ' --interrupt-budget=1024 ' }).WARM_UP_V8_FLAGS).toBe(
      '--interrupt-budget=1024',
    );
    expect(() => loadConfig({ WARM_UP_V8_FLAGS: 'interrupt-budget=1024' })).toThrow(/WARM_UP_V8_FLAGS/);
  });
});

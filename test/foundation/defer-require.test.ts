/**
 * Deferred requires (lib/defer-require.ts): a stand-in loads the real module on first use, and
 * the gateway's entry point uses it to keep @apollo/gateway's usage-metrics packages unloaded.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { deferRequires, loadOnFirstUse } from '../../lib/defer-require.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

describe('loadOnFirstUse', () => {
  it('loads nothing until a property is read, then loads once and forwards', () => {
    let loads = 0;
    const stand = loadOnFirstUse(() => {
      loads++;
      return { answer: 42, twice: (n: number) => n * 2 };
    }) as { answer: number; twice(n: number): number };
    expect(loads).toBe(0);
    expect(stand.answer).toBe(42);
    expect(stand.twice(4)).toBe(8);
    expect('answer' in stand).toBe(true);
    expect(Object.keys(stand)).toEqual(['answer', 'twice']);
    expect(loads).toBe(1);
  });
});

describe('deferRequires', () => {
  it('defers only the named requests of the matching parent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'defer-'));
    const loaded: string[] = [];
    (globalThis as { __deferLoaded?: string[] }).__deferLoaded = loaded;
    for (const name of ['heavy', 'light']) {
      writeFileSync(
        join(dir, `${name}.cjs`),
        `globalThis.__deferLoaded.push('${name}'); module.exports = { value: '${name}' };`,
      );
    }
    writeFileSync(
      join(dir, 'parent-of-deferred.cjs'),
      `const heavy = require('./heavy.cjs'); const light = require('./light.cjs');
       module.exports = { heavy: () => heavy.value, light: () => light.value };`,
    );
    deferRequires(/parent-of-deferred\.cjs$/, new Set(['./heavy.cjs']));
    type Parent = Record<string, () => string>;
    const parent = createRequire(join(dir, 'x.cjs'))('./parent-of-deferred.cjs') as Parent;
    expect(loaded).toEqual(['light']);
    expect(parent.heavy?.()).toBe('heavy');
    expect(loaded).toEqual(['light', 'heavy']);
  });
});

/** Which of @apollo/gateway's usage-metrics packages are loaded once @apollo/gateway is. */
async function apolloMetricsPackagesLoaded(withDeferral: boolean): Promise<number> {
  const script = `
    import { createRequire } from 'node:module';
    ${withDeferral ? "await import('./gateway/defer-apollo-telemetry.ts');" : ''}
    const require = createRequire(import.meta.url);
    require('@apollo/gateway');
    const loaded = Object.keys(require.cache).filter((f) =>
      /node_modules\\/@opentelemetry\\/(sdk-metrics|resource-detector-|exporter-metrics-otlp-http)/.test(f));
    console.log(loaded.length);
    process.exit(0);`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
  });
  return Number(stdout.trim().split('\n').at(-1));
}

describe("the gateway's entry point", () => {
  it("keeps @apollo/gateway's usage-metrics packages unloaded (they load without the deferral)", async () => {
    expect(await apolloMetricsPackagesLoaded(false)).toBeGreaterThan(0);
    expect(await apolloMetricsPackagesLoaded(true)).toBe(0);
  }, 60_000);

  it("still gives Apollo's usage-metrics export working packages when it does run (telemetry on)", async () => {
    // Every other test runs with APOLLO_TELEMETRY_DISABLED; this is the path it switches off.
    const script = `
      import { createRequire } from 'node:module';
      await import('./gateway/defer-apollo-telemetry.ts');
      const require = createRequire(import.meta.url);
      const otel = require('@apollo/gateway/dist/utilities/opentelemetry.js');
      const count = () => Object.keys(require.cache).filter((f) =>
        /node_modules\\/@opentelemetry\\/(sdk-metrics|exporter-metrics-otlp-http)/.test(f)).length;
      const before = count();
      const provider = otel.createDataCollectionExporter();
      provider.getMeter('test').createCounter('calls').add(1);
      console.log(JSON.stringify({ before, after: count(), provider: provider.constructor.name }));
      process.exit(0);`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(result).toEqual({ before: 0, after: expect.any(Number), provider: 'MeterProvider' });
    expect(result.after).toBeGreaterThan(0);
  }, 60_000);

  it('imports the deferral before anything that imports @apollo/gateway', async () => {
    const { readFile } = await import('node:fs/promises');
    const main = await readFile(join(root, 'gateway/main.ts'), 'utf8');
    const imports = [...main.matchAll(/^import .*'(.+)';$/gm)].map((m) => m[1]);
    expect(imports.indexOf('./defer-apollo-telemetry.ts')).toBeLessThan(imports.indexOf('./topology.ts'));
    expect(imports.indexOf('./defer-apollo-telemetry.ts')).toBeGreaterThanOrEqual(0);
  });
});

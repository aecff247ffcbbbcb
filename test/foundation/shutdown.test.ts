import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startProcess } from '../../harness/processes.ts';

describe('npm start as a process', () => {
  it('serves, then on SIGTERM stops accepting, finishes and exits 0', async () => {
    const proc = await startProcess('gateway', {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-shutdown-')),
      EMBEDDED_DB: 'memory',
      CATALOG_SIZE: '200',
    });
    const health = await fetch(`${proc.url}/healthz`);
    expect(health.status).toBe(200);
    const code = await proc.stop();
    expect(code).toBe(0);
    expect(proc.output()).toContain('shutting down');
    await expect(fetch(`${proc.url}/healthz`)).rejects.toThrow();
    // A start beside the whole suite took over the default 30 s once (2-core VM, load ~10).
  }, 90_000);

  it('refuses to start on a bad setting and names the variable', async () => {
    await expect(startProcess('gateway', { PORT: 'eighty' }, 20_000)).rejects.toThrow(
      /exited with 2[\s\S]*PORT/,
    );
  });
});

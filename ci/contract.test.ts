/**
 * `npm run contract:check` on the acceptance fixtures: each fails with a clear message, the
 * compliant ones pass. The command itself (arguments, exit code) runs as a process twice; the
 * fixtures run through the same check and report in process (a process costs seconds).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkContracts, formatReport } from './contract/check.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const openapi = (f: string) => `ci/fixtures/openapi/${f}`;
const graphql = (d: string) => `ci/fixtures/graphql/${d}`;

function check(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'ci/contract.ts', 'check', '--baseline', graphql('base'), ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, out: stdout + stderr });
      },
    );
  });
}

const GOOD = ['--openapi', openapi('agent-order.yaml'), '--schemas', graphql('added-restricted')];

describe('npm run contract:check, the command', () => {
  it('exits 0 on compliant documents and a restricted new mutation', async () => {
    const { code, out } = await check(GOOD);
    expect(out).toContain('contracts OK');
    expect(code).toBe(0);
  });

  it('exits 1 on a new unrestricted mutation, naming it', async () => {
    const { code, out } = await check([
      '--openapi',
      openapi('agent-order.yaml'),
      '--schemas',
      graphql('added-unrestricted'),
    ]);
    expect(out).toContain("Mutation field 'Mutation.cancelOrder' was added without @requiresRole");
    expect(code).toBe(1);
  });
});

/** What `contract:check --openapi <doc> --schemas <dir> --baseline base` prints, and whether it passes. */
async function checkInProcess(args: string[]) {
  const doc = args[args.indexOf('--openapi') + 1] ?? '';
  const schemas = args[args.indexOf('--schemas') + 1] ?? '';
  const report = await checkContracts({
    repoRoot: root,
    schemasDir: `${root}${schemas}`,
    openapiFiles: [`${root}${doc}`],
    diff: { baselineDir: `${root}${graphql('base')}` },
  });
  return { ok: report.ok, out: formatReport(report, root) };
}

describe('npm run contract:check on the acceptance fixtures', () => {
  it.each([
    [
      'an open request object',
      ['--openapi', openapi('open-request-object.yaml'), '--schemas', graphql('base')],
      'agent-request-closed',
      'request body / is an open object',
    ],
    [
      'an unbounded string',
      ['--openapi', openapi('unbounded-string.yaml'), '--schemas', graphql('base')],
      'agent-string-bounded',
      '/properties/agent_id is an unbounded string',
    ],
    [
      'a missing 429',
      ['--openapi', openapi('missing-429.yaml'), '--schemas', graphql('base')],
      'agent-error-responses',
      'does not declare a 429 response',
    ],
    [
      'a breaking SDL change',
      ['--openapi', openapi('agent-order.yaml'), '--schemas', graphql('breaking')],
      'BREAKING',
      "Field 'Order.quantity' changed type from 'Int!' to 'Float!'",
    ],
    [
      'a new unrestricted mutation',
      ['--openapi', openapi('agent-order.yaml'), '--schemas', graphql('added-unrestricted')],
      'BREAKING',
      "Mutation field 'Mutation.cancelOrder' was added without @requiresRole",
    ],
  ])('fails %s, saying what and where', async (_name, args, rule, message) => {
    const { ok, out } = await checkInProcess(args);
    expect(out).toContain(rule);
    expect(out).toContain(message);
    expect(out).toContain('contracts FAILED');
    expect(ok).toBe(false);
  });

  it('passes the compliant fixtures', async () => {
    const { ok, out } = await checkInProcess(GOOD);
    expect(out).toContain('contracts OK');
    expect(ok).toBe(true);
  });
});

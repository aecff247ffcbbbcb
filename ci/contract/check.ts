/**
 * One contract check, as a value: the OpenAPI AI-safety lint, the role lint of every SDL, the
 * agent contract's freshness and the GraphQL diff gate. ci/contract.ts prints it; tests read it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Change } from '@graphql-inspector/core';
import {
  baselineBase,
  diffSchemas,
  type FileDiff,
  failed,
  gitBase,
  readSchemaDir,
} from '../graphql/diff-gate.ts';
import { lintSdlRoles, MUTATION_WITHOUT_ROLE_REASON, type RoleFinding } from '../graphql/roles.ts';
import {
  AGENT_CONTRACT_FILE,
  fullDocumentFiles,
  generateAgentContract,
  OPENAPI_DIR,
} from '../openapi/agent-contract.ts';
import { errorsOf, type Finding, lintFile } from '../openapi/lint.ts';

export interface CheckOptions {
  readonly repoRoot: string;
  /** SDL folder: every `*.graphql` directly in it (subgraphs and supergraph). */
  readonly schemasDir: string;
  /** Documents to lint; default every document in schemas/openapi/ and the agent contract. */
  readonly openapiFiles?: readonly string[];
  /** Diff base; undefined skips the diff gate (`contract:lint`). */
  readonly diff?: { readonly baselineDir: string } | { readonly gitRef: string } | undefined;
  /** Check that schemas/openapi/agent.yaml is what the full documents generate. */
  readonly agentContract?: boolean;
  readonly openapiDir?: string;
}

export interface AgentContractStatus {
  readonly fresh: boolean;
  readonly exists: boolean;
  readonly operations: number;
  /** Set when the full documents cannot produce a contract (a YAML error, a duplicate operation). */
  readonly error?: string;
}

export interface ContractReport {
  readonly ok: boolean;
  readonly openapi: ReadonlyMap<string, readonly Finding[]>;
  readonly roles: ReadonlyMap<string, readonly RoleFinding[]>;
  readonly agent?: AgentContractStatus;
  readonly diff?: { readonly base: string; readonly files: readonly FileDiff[]; readonly error?: string };
}

function agentStatus(dir: string): AgentContractStatus {
  const file = join(dir, AGENT_CONTRACT_FILE);
  let fresh: string;
  try {
    fresh = generateAgentContract(dir);
  } catch (err) {
    return { fresh: false, exists: existsSync(file), operations: 0, error: (err as Error).message };
  }
  const operations = (fresh.match(/^ {4}(get|put|post|delete|patch|head|options|trace):$/gm) ?? []).length;
  if (!existsSync(file)) return { fresh: false, exists: false, operations };
  return { fresh: readFileSync(file, 'utf8') === fresh, exists: true, operations };
}

export async function checkContracts(opts: CheckOptions): Promise<ContractReport> {
  const openapiDir = opts.openapiDir ?? OPENAPI_DIR;
  const agentFile = join(openapiDir, AGENT_CONTRACT_FILE);
  const docs = opts.openapiFiles ?? [
    ...fullDocumentFiles(openapiDir),
    ...(existsSync(agentFile) ? [agentFile] : []),
  ];
  const openapi = new Map<string, readonly Finding[]>();
  for (const file of docs) openapi.set(file, await lintFile(file));

  const current = readSchemaDir(opts.schemasDir);
  const roles = new Map<string, readonly RoleFinding[]>();
  for (const [name, sdl] of current) roles.set(name, lintSdlRoles(sdl));

  const agent = opts.agentContract ? agentStatus(openapiDir) : undefined;

  let diff: ContractReport['diff'];
  if (opts.diff) {
    const d = opts.diff;
    try {
      const base =
        'gitRef' in d
          ? gitBase(d.gitRef, opts.repoRoot)
          : {
              ...baselineBase(d.baselineDir),
              label: `committed baseline ${relative(opts.repoRoot, d.baselineDir)}`,
            };
      diff =
        base.files.size === 0
          ? { base: base.label, files: [], error: 'the base holds no SDL: run `npm run contract:baseline`' }
          : { base: base.label, files: await diffSchemas(base.files, current) };
    } catch (err) {
      diff = { base: 'gitRef' in d ? d.gitRef : d.baselineDir, files: [], error: (err as Error).message };
    }
  }

  const ok =
    [...openapi.values()].every((f) => errorsOf(f).length === 0) &&
    [...roles.values()].every((f) => f.length === 0) &&
    (!agent || agent.fresh) &&
    (!diff || (!diff.error && !diff.files.some(failed)));
  return { ok, openapi, roles, ...(agent ? { agent } : {}), ...(diff ? { diff } : {}) };
}

const OK = '✔';
const FAIL = '✖';

export function formatReport(report: ContractReport, root: string, verbose = false): string {
  const out: string[] = [];
  const rel = (f: string) => relative(root, f) || basename(f);
  let errors = 0;

  out.push(
    `\n== OpenAPI AI-safety lint (Spectral: oas + OWASP + agent rules), ${report.openapi.size} documents`,
  );
  if (report.openapi.size === 0) out.push('   no OpenAPI documents yet');
  for (const [file, findings] of report.openapi) {
    const errs = errorsOf(findings);
    const warns = findings.length - errs.length;
    errors += errs.length;
    out.push(
      `${errs.length ? FAIL : OK} ${rel(file)}: ${errs.length} errors, ${warns} warnings${warns && !verbose ? ' (--verbose lists them)' : ''}`,
    );
    for (const f of verbose ? findings : errs)
      out.push(
        `    ${rel(file)}:${f.line}  ${f.severity}  ${f.rule}\n      ${f.message}\n      at ${f.path}`,
      );
  }

  out.push(`\n== GraphQL role restriction: every Mutation field declares @requiresRole`);
  for (const [name, findings] of report.roles) {
    errors += findings.length;
    out.push(`${findings.length ? FAIL : OK} ${name}`);
    for (const f of findings) out.push(`    ${f.message}`);
  }

  if (report.agent) {
    const a = report.agent;
    out.push(`\n== Bounded agent contract (schemas/openapi/${AGENT_CONTRACT_FILE})`);
    if (!a.fresh) errors++;
    out.push(
      a.error
        ? `${FAIL} cannot be generated: ${a.error}`
        : a.fresh
          ? `${OK} fresh: ${a.operations} agent-facing operations`
          : `${FAIL} ${a.exists ? 'stale' : 'missing'}: run \`npm run contract:agent\` and commit it`,
    );
    if (a.operations === 0 && !a.error)
      out.push(
        '    warning: no operation is marked x-agent-facing: true; agents would get an empty contract',
      );
  }

  if (report.diff) {
    const d = report.diff;
    out.push(`\n== GraphQL diff gate (@graphql-inspector) against ${d.base}`);
    if (d.error) {
      errors++;
      out.push(`${FAIL} ${d.error}`);
    }
    for (const f of d.files) {
      if (f.error) {
        errors++;
        out.push(`${FAIL} ${f.file}: ${f.error}`);
        continue;
      }
      errors += f.breaking.length;
      out.push(
        `${f.breaking.length ? FAIL : OK} ${f.file}: ${f.breaking.length} breaking, ${f.dangerous.length} dangerous, ${f.safe} safe`,
      );
      for (const c of f.breaking)
        out.push(
          `    BREAKING  ${c.message}${c.criticality.reason ? `\n      why: ${c.criticality.reason}` : ''}`,
        );
      for (const c of f.dangerous) out.push(`    dangerous ${c.message}`);
    }
    const roleOnly = (c: Change) => c.criticality.reason === MUTATION_WITHOUT_ROLE_REASON;
    if (d.files.some((f) => f.breaking.some((c) => !roleOnly(c))))
      out.push(
        '    A deliberate breaking change: run `npm run contract:baseline` and commit it, saying what breaks (docs/contracts.md).',
      );
  }

  out.push(`\n== ${report.ok ? `${OK} contracts OK` : `${FAIL} contracts FAILED: ${errors} errors`}`);
  return out.join('\n');
}

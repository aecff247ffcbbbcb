/**
 * Contract governance from the command line (docs/contracts.md).
 *
 *   npm run contract:lint                 AI-safety lint of schemas/openapi/*.yaml + role lint of the SDL
 *   npm run contract:check                lint + agent contract fresh + GraphQL diff gate (CI runs this)
 *   npm run contract:check -- --base origin/main   diff against the merge base with a git ref (pull requests)
 *   npm run contract:agent                regenerate schemas/openapi/agent.yaml
 *   npm run contract:baseline             accept the current SDL as the new diff baseline
 *
 * Options (also for fixtures): --openapi <file> (repeatable; replaces the documents linted),
 * --schemas <dir> (SDL to check, default schemas/), --baseline <dir> (default schemas/baseline/),
 * --no-agent (skip the agent contract freshness check), --verbose (list warnings too).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type CheckOptions, checkContracts, formatReport } from './contract/check.ts';
import { diffSchemas, readSchemaDir } from './graphql/diff-gate.ts';
import { AGENT_CONTRACT_FILE, generateAgentContract, OPENAPI_DIR } from './openapi/agent-contract.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    openapi: { type: 'string', multiple: true },
    schemas: { type: 'string' },
    baseline: { type: 'string' },
    base: { type: 'string' },
    'no-agent': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});

const command = positionals[0] ?? 'check';
const schemasDir = values.schemas ?? join(root, 'schemas');
const baselineDir = values.baseline ?? join(root, 'schemas', 'baseline');

switch (command) {
  case 'lint':
  case 'check': {
    const opts: CheckOptions = {
      repoRoot: root,
      schemasDir,
      ...(values.openapi ? { openapiFiles: values.openapi } : {}),
      diff: command === 'check' ? (values.base ? { gitRef: values.base } : { baselineDir }) : undefined,
      agentContract: command === 'check' && !values['no-agent'] && !values.openapi,
    };
    const report = await checkContracts(opts);
    console.log(formatReport(report, root, values.verbose));
    process.exit(report.ok ? 0 : 1);
    break;
  }
  case 'agent': {
    const target = join(OPENAPI_DIR, AGENT_CONTRACT_FILE);
    writeFileSync(target, generateAgentContract());
    console.log(`wrote ${relative(root, target)}`);
    break;
  }
  case 'baseline': {
    // Say what the new baseline accepts, for the commit message.
    const accepted = (await diffSchemas(readSchemaDir(baselineDir), readSchemaDir(schemasDir))).flatMap(
      (d) => [
        ...(d.error ? [`${d.file}: ${d.error}`] : []),
        ...d.breaking.map((c) => `${d.file}: ${c.message}`),
      ],
    );
    console.log(
      accepted.length
        ? `accepting ${accepted.length} breaking changes:\n${accepted.map((a) => `  - ${a}`).join('\n')}`
        : 'no breaking change against the previous baseline',
    );
    mkdirSync(baselineDir, { recursive: true });
    for (const f of readdirSync(baselineDir)) if (f.endsWith('.graphql')) rmSync(join(baselineDir, f));
    const names = readdirSync(schemasDir).filter((f) => f.endsWith('.graphql'));
    for (const f of names) copyFileSync(join(schemasDir, f), join(baselineDir, f));
    const readme = join(baselineDir, 'README.md');
    if (!existsSync(readme) || !readFileSync(readme, 'utf8').includes('contract:baseline'))
      writeFileSync(
        readme,
        '# GraphQL diff baseline\n\nThe SDL the diff gate compares with. Updated only by `npm run contract:baseline`,\n' +
          'in a commit that says which breaking changes it accepts (docs/contracts.md).\n',
      );
    console.log(`baseline now holds ${names.join(', ')} (${relative(root, baselineDir)}); commit it`);
    break;
  }
  default:
    console.error(`unknown command ${command}: lint, check, agent or baseline`);
    process.exit(2);
}

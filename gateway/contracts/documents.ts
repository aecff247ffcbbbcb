import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import YAML from 'yaml';
import { AGENT_CONTRACT_FILE, fullDocumentFiles, OPENAPI_DIR } from '../../lib/openapi-files.ts';

export interface ServedDocument {
  readonly name: string;
  readonly yaml: string;
  readonly json: string;
}

export interface ContractDocuments {
  /** The bounded agent contract (schemas/openapi/agent.yaml). */
  readonly agent: ServedDocument;
  /** The full documents, by name (`procurement`, `pricing`, …): operators only. */
  readonly full: ReadonlyMap<string, ServedDocument>;
}

function served(file: string): ServedDocument {
  return servedText(basename(file).replace(/\.ya?ml$/, ''), readFileSync(file, 'utf8'));
}

/**
 * The JSON form is made on its first request, not at start: it parses the whole YAML (~0.2 s of
 * a gateway's start for all the documents, measured with --cpu-prof), and most processes never
 * serve it. The YAML itself is checked in CI (contract:check), so a start has nothing to find.
 */
function servedText(name: string, yaml: string): ServedDocument {
  let json: string | undefined;
  return {
    name,
    yaml,
    get json() {
      json ??= JSON.stringify(YAML.parse(yaml));
      return json;
    },
  };
}

const EMPTY_AGENT_CONTRACT =
  'openapi: 3.1.0\ninfo:\n  title: "Agent Commerce: agent contract"\n  version: "0"\npaths: {}\n';

/** Read once at start-up: the documents are part of the release, like the supergraph. */
export function loadContractDocuments(dir: string = OPENAPI_DIR): ContractDocuments {
  const agentFile = join(dir, AGENT_CONTRACT_FILE);
  const agent = existsSync(agentFile) ? served(agentFile) : servedText('agent', EMPTY_AGENT_CONTRACT);
  const full = new Map(
    fullDocumentFiles(dir)
      .map(served)
      .map((d) => [d.name, d] as const),
  );
  return { agent, full };
}

/**
 * The persisted-operation manifest, built from the repository's own operations
 * (schemas/operations/*.graphql) into schemas/operations/manifest.json.
 *   npm run operations:manifest   writes it
 *   npm run operations:check      fails when it is stale, or when an operation does not validate
 *                                 against the committed supergraph or exceeds the default limits
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { ApolloGateway } from '@apollo/gateway';
import { type GraphQLSchema, parse, specifiedRules, validate } from 'graphql';
import { useOperationLimits } from '../gateway/graphql/limits.ts';
import { buildManifest, ManifestError, type OperationManifest } from '../gateway/graphql/manifest.ts';
import { loadConfig } from '../lib/config.ts';

const dir = new URL('../schemas/operations/', import.meta.url);
const target = new URL('manifest.json', dir);

export const operationSources = (from: URL = dir) =>
  readdirSync(from)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((file) => ({
      file: `${from.pathname.slice(from.pathname.indexOf('schemas/'))}${file}`,
      source: readFileSync(new URL(file, from), 'utf8'),
    }));

/**
 * Earlier texts of the repository's operations (schemas/operations/retired/): still in the
 * safelist, so clients built against them keep working; still validated against the supergraph,
 * so a deprecated field they use cannot be removed while they are listed.
 */
export const retiredOperationSources = () => operationSources(new URL('retired/', dir));

/** The manifest of the repository's operations, current and retired. */
export const repositoryManifest = () => buildManifest(operationSources(), retiredOperationSources());

/** The API schema the gateway serves, from the same supergraph and the same library. */
export async function gatewaySchema(
  supergraphSdl = readFileSync(new URL('../schemas/supergraph.graphql', import.meta.url), 'utf8'),
): Promise<GraphQLSchema> {
  const gateway = new ApolloGateway({ supergraphSdl });
  try {
    return (await gateway.load()).schema;
  } finally {
    await gateway.stop();
  }
}

/** Problems of a manifest: operations the gateway would refuse with its default configuration. */
export function manifestProblems(manifest: OperationManifest, schema: GraphQLSchema): string[] {
  const defaults = loadConfig({});
  const limits = useOperationLimits({
    maxTokens: defaults.GRAPHQL_MAX_TOKENS,
    maxDepth: defaults.GRAPHQL_MAX_DEPTH,
    maxAliases: defaults.GRAPHQL_MAX_ALIASES,
    maxRootFields: defaults.GRAPHQL_MAX_ROOT_FIELDS,
    maxDirectives: defaults.GRAPHQL_MAX_DIRECTIVES,
    maxCost: defaults.GRAPHQL_MAX_COST,
  });
  const problems: string[] = [];
  for (const op of manifest.operations) {
    try {
      const doc = parse(op.body, limits.parseOptions);
      for (const e of validate(schema, doc, [...specifiedRules, ...limits.validationRules])) {
        problems.push(`${op.name}: ${e.message}`);
      }
    } catch (err) {
      problems.push(`${op.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

export const manifestJson = (manifest: OperationManifest) => `${JSON.stringify(manifest, null, 2)}\n`;

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const manifest = repositoryManifest();
    const problems = manifestProblems(manifest, await gatewaySchema());
    if (problems.length) {
      console.error(`schemas/operations: the gateway would refuse:\n  ${problems.join('\n  ')}`);
      process.exit(1);
    }
    const fresh = manifestJson(manifest);
    if (process.argv.includes('--check')) {
      if (readFileSync(target, 'utf8') !== fresh) {
        console.error(
          'schemas/operations/manifest.json is stale: run `npm run operations:manifest` and commit it.',
        );
        process.exit(1);
      }
      console.log(`operation manifest is fresh (${manifest.operations.length} operations)`);
    } else {
      writeFileSync(target, fresh);
      console.log(`wrote schemas/operations/manifest.json (${manifest.operations.length} operations)`);
    }
  } catch (err) {
    if (!(err instanceof ManifestError) && !(err instanceof Error && err.name === 'GraphQLError')) throw err;
    console.error(err.message);
    process.exit(1);
  }
}

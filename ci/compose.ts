/**
 * Composes the three subgraph SDLs into schemas/supergraph.graphql.
 *   npm run compose          writes it
 *   npm run compose -- --check  fails when the committed file is stale (CI)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

export const SUBGRAPHS = ['pricing', 'promotions', 'procurement'] as const;
export type SubgraphName = (typeof SUBGRAPHS)[number];
const root = new URL('../schemas/', import.meta.url);

export const subgraphSdl = (name: SubgraphName): string =>
  readFileSync(new URL(`${name}.graphql`, root), 'utf8');

export function composeSupergraph(sdl: (name: SubgraphName) => string = subgraphSdl): string {
  const result = composeServices(
    SUBGRAPHS.map((name) => ({
      name,
      url: `http://${name}.subgraph.invalid/graphql`,
      typeDefs: parse(sdl(name)),
    })),
  );
  if (result.errors)
    throw new Error(`Composition failed:\n${result.errors.map((e) => `  ${e.message}`).join('\n')}`);
  return result.supergraphSdl;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = new URL('supergraph.graphql', root);
  const fresh = `${composeSupergraph()}\n`;
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== fresh) {
      console.error('schemas/supergraph.graphql is stale: run `npm run compose` and commit it.');
      process.exit(1);
    }
    console.log('supergraph is fresh');
  } else {
    writeFileSync(target, fresh);
    console.log('wrote schemas/supergraph.graphql');
  }
}

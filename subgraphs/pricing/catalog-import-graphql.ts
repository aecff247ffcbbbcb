/**
 * The catalog import's GraphQL edge (schemas/pricing.graphql: startCatalogImport,
 * appendCatalogImport, commitCatalogImport, cancelCatalogImport, catalogImport), role
 * catalog:admin (catalog:read may watch). Parses, calls the import service, renders; its
 * refusals as BAD_USER_INPUT (the input), NOT_FOUND, or CONFLICT (the import's state).
 */
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';
import {
  type CatalogImports,
  ImportInputError,
  type ImportMode,
  ImportNotFound,
  ImportStateError,
} from './catalog/import/service.ts';

function graphqlError(err: unknown): unknown {
  if (err instanceof ImportInputError)
    return new GraphQLError(err.message, {
      extensions: {
        code: 'BAD_USER_INPUT',
        errors: [{ pointer: `/${err.path.replace(/^\$\.?/, '')}`, message: err.message }],
      },
    });
  if (err instanceof ImportNotFound)
    return new GraphQLError(err.message, { extensions: { code: 'NOT_FOUND' } });
  if (err instanceof ImportStateError)
    return new GraphQLError(err.message, { extensions: { code: 'CONFLICT' } });
  return err;
}

const rethrow = (err: unknown): never => {
  throw graphqlError(err);
};

export function catalogImportResolvers(imports: CatalogImports) {
  return {
    Query: {
      catalogImport: (_: unknown, { id, errorsFirst }: { id: string; errorsFirst?: number | null }) =>
        imports.get(id, errorsFirst ?? 100).then((i) => i ?? null, rethrow),
    },
    Mutation: {
      startCatalogImport: (
        _: unknown,
        { input }: { input: { mode: ImportMode; metadata: unknown } },
        ctx: RequestContext,
      ) =>
        imports
          .start({ mode: input.mode, metadata: input.metadata, startedBy: ctx.caller.subject })
          .catch(rethrow),
      appendCatalogImport: (
        _: unknown,
        a: { id: string; firstLine: number; lines: string[]; oversized?: number[] | null },
      ) => imports.append(a.id, a.firstLine, a.lines, a.oversized ?? []).catch(rethrow),
      commitCatalogImport: (_: unknown, { id }: { id: string }) => imports.commit(id).catch(rethrow),
      cancelCatalogImport: (_: unknown, { id }: { id: string }) => imports.cancel(id).catch(rethrow),
    },
  };
}

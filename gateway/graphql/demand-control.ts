import type { ApolloServerOptions, ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { type Config, ConfigError } from '../../lib/config.ts';
import { bodyLimitRoute } from './body-limit.ts';
import { boundedDocumentStore } from './bounded-cache.ts';
import { type DemandCode, demandCodeOf, formatDemandError } from './codes.ts';
import { useOperationLimits } from './limits.ts';
import { DEFAULT_MANIFEST_URL, type PersistedOperations, readManifest } from './manifest.ts';
import { usePersistedOperations } from './persisted-operations.ts';
import { safelistHook } from './safelist.ts';

type ServerOptions = Pick<
  ApolloServerOptions<BaseContext>,
  | 'parseOptions'
  | 'validationRules'
  | 'formatError'
  | 'documentStore'
  | 'persistedQueries'
  | 'hideSchemaDetailsFromClientErrors'
>;

export interface DemandControl {
  /** Spread into the ApolloServer options. */
  readonly server: ServerOptions;
  /** Added to the ApolloServer plugins. */
  readonly plugins: ApolloServerPlugin<BaseContext>[];
  /** Spread into the /graphql route options. */
  readonly route: {
    bodyLimit: number;
    errorHandler: ReturnType<typeof bodyLimitRoute>['errorHandler'];
    preHandler?: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  };
}

/**
 * Demand control of the GraphQL endpoint (docs/graphql-demand-control.md), in the order a
 * request meets it: body size (413) → safelist, when on (400) → APQ lookup → token limit while
 * parsing (400) → depth, aliases, root fields, directives, cost while validating (400) → role
 * rules → plan → subgraphs. A refusal is counted in graphql_demand_refusals_total{code}.
 */
export function demandControl(config: Config, metrics: Registry): DemandControl {
  const refusals = new Counter({
    name: 'graphql_demand_refusals_total',
    help: 'GraphQL requests refused by demand control, by error code',
    labelNames: ['code'],
    registers: [metrics],
  });
  const refused = (code: DemandCode) => refusals.labels(code).inc();
  const manifest = manifestOf(config);
  const { persistedQueries } = usePersistedOperations({
    manifest,
    registrationBytes: config.GRAPHQL_APQ_CACHE_BYTES,
  });
  return {
    server: {
      ...useOperationLimits({
        maxTokens: config.GRAPHQL_MAX_TOKENS,
        maxDepth: config.GRAPHQL_MAX_DEPTH,
        maxAliases: config.GRAPHQL_MAX_ALIASES,
        maxRootFields: config.GRAPHQL_MAX_ROOT_FIELDS,
        maxDirectives: config.GRAPHQL_MAX_DIRECTIVES,
        maxCost: config.GRAPHQL_MAX_COST,
      }),
      formatError: formatDemandError,
      persistedQueries,
      documentStore: boundedDocumentStore(config.GRAPHQL_DOCUMENT_CACHE_BYTES),
      // Where Apollo turns introspection off, "Did you mean …?" would still reveal field names.
      hideSchemaDetailsFromClientErrors: config.NODE_ENV === 'production',
    },
    plugins: [
      {
        async requestDidStart() {
          return {
            async didEncounterErrors({ errors }) {
              for (const error of errors) {
                const code = demandCodeOf(error);
                if (code) refused(code);
              }
            },
          };
        },
      },
    ],
    route: {
      ...bodyLimitRoute(config.GRAPHQL_BODY_LIMIT_BYTES, refused),
      ...(config.GRAPHQL_SAFELIST ? { preHandler: safelistHook(manifest, refused) } : {}),
    },
  };
}

function manifestOf(config: Config): PersistedOperations {
  try {
    return readManifest(config.GRAPHQL_OPERATIONS_MANIFEST ?? DEFAULT_MANIFEST_URL);
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  GRAPHQL_OPERATIONS_MANIFEST: ${(err as Error).message}`);
  }
}

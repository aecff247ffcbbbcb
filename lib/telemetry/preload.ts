/**
 * Imported first by every entry point (after source maps), so that when tracing is configured
 * the OpenTelemetry SDK is running before fastify, http, graphql, pg and ioredis are evaluated.
 * When no OTLP endpoint is set, this is the whole cost of tracing: one look at the environment.
 */
import { TracingConfigError, tracingConfig } from './config.ts';
import { startTracing } from './sdk.ts';

try {
  const config = tracingConfig(process.env, process.argv);
  if (config) startTracing(config);
} catch (err) {
  if (!(err instanceof TracingConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

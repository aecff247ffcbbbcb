/**
 * @apollo/gateway's `utilities/opentelemetry.js` requires, at load time, an OpenTelemetry
 * metrics SDK, its OTLP exporter and four cloud resource detectors (with gaxios and the rest):
 * ~11 MB of heap, measured. They serve only the usage metrics the gateway sends to Apollo,
 * which this system switches off (APOLLO_TELEMETRY_DISABLED, set by every entry point). Deferred
 * here, they load only if that export ever runs. The same file's tracer (@opentelemetry/api)
 * and semantic-convention names are used on every request and load as before.
 * Imported by the gateway's entry point before anything that imports @apollo/gateway.
 */
import { deferRequires } from '../lib/defer-require.ts';

export const APOLLO_TELEMETRY_FILE = /[\\/]@apollo[\\/]gateway[\\/]dist[\\/]utilities[\\/]opentelemetry\.js$/;

export const APOLLO_TELEMETRY_DEFERRED: ReadonlySet<string> = new Set([
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/resource-detector-alibaba-cloud',
  '@opentelemetry/resource-detector-aws',
  '@opentelemetry/resource-detector-gcp',
  '@opentelemetry/resource-detector-azure',
  '@opentelemetry/resources',
  '@opentelemetry/exporter-metrics-otlp-http',
]);

deferRequires(APOLLO_TELEMETRY_FILE, APOLLO_TELEMETRY_DEFERRED);

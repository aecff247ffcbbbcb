/**
 * When tracing is on, and under which service name. Read from the standard OpenTelemetry
 * variables (the SDK reads the rest of them itself: OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_*,
 * OTEL_RESOURCE_ATTRIBUTES…), before lib/config.ts loads, because the SDK must start before the
 * modules it instruments do.
 */
export interface TracingConfig {
  serviceName: string;
}

export class TracingConfigError extends Error {}

/** The OpenTelemetry variables docs/observability.md documents (the SDK reads them, not lib/config.ts). */
export const TRACING_VARIABLES: readonly string[] = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_PROPAGATORS',
  'OTEL_SDK_DISABLED',
];

type Env = Record<string, string | undefined>;

const ENDPOINTS = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const;
const ROLES = ['embedded', 'gateway', 'pricing', 'promotions', 'procurement'] as const;

/** `undefined` (off) unless an OTLP endpoint is set and OTEL_SDK_DISABLED is not `true`. */
export function tracingConfig(env: Env, argv: readonly string[]): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const set = ENDPOINTS.filter((name) => env[name]?.trim());
  if (set.length === 0) return undefined;
  for (const name of set) {
    if (!isHttpUrl(env[name]?.trim() ?? '')) {
      throw new TracingConfigError(`Invalid configuration:\n  ${name}: expected an http(s) URL`);
    }
  }
  return { serviceName: env.OTEL_SERVICE_NAME?.trim() || `agent-commerce-${roleOf(env, argv)}` };
}

// OTLP/HTTP: a host:port without a scheme parses as a URL whose scheme is the host.
const isHttpUrl = (v: string) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol);

/**
 * The role this process runs, from what started it: `dist/gateway/role.js <role>` (the image),
 * `subgraphs/<name>/main`, or `gateway/main` with TOPOLOGY.
 */
export function roleOf(env: Env, argv: readonly string[]): string {
  const named = (v: string | undefined) => (ROLES as readonly string[]).includes(v ?? '');
  if (named(env.ROLE)) return env.ROLE as string;
  const script = (argv[1] ?? '').replaceAll('\\', '/');
  if (/gateway\/role\.[jt]s$/.test(script) && named(argv[2])) return argv[2] as string;
  const subgraph = /subgraphs\/([a-z]+)\/main\.[jt]s$/.exec(script)?.[1];
  if (named(subgraph)) return subgraph as string;
  return env.TOPOLOGY === 'distributed' ? 'gateway' : 'embedded';
}

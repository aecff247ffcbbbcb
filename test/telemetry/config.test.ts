/** When tracing turns on, and the service name each process reports (lib/telemetry/config.ts). */
import { describe, expect, it } from 'vitest';
import { roleOf, TracingConfigError, tracingConfig } from '../../lib/telemetry/config.ts';

const GATEWAY = ['node', '/app/dist/gateway/main.js'];

describe('tracingConfig', () => {
  it.each([
    ['no endpoint: off', {}, undefined],
    ['an empty endpoint: off', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, undefined],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT: on',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'agent-commerce-embedded',
    ],
    [
      'the traces endpoint alone: on',
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' },
      'agent-commerce-embedded',
    ],
    [
      'OTEL_SDK_DISABLED=true wins: off',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' },
      undefined,
    ],
    [
      'OTEL_SERVICE_NAME names it',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'edge-eu' },
      'edge-eu',
    ],
  ])('%s', (_label, env, serviceName) => {
    expect(tracingConfig(env, GATEWAY)?.serviceName).toBe(serviceName);
  });

  it.each(['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'])(
    'stops on an endpoint that is not a URL, naming %s',
    (name) => {
      expect(() => tracingConfig({ [name]: 'collector:4318 ' }, GATEWAY)).toThrow(TracingConfigError);
      expect(() => tracingConfig({ [name]: 'collector:4318 ' }, GATEWAY)).toThrow(name);
    },
  );
});

describe('roleOf', () => {
  it.each([
    ['ROLE set by the image entry point', { ROLE: 'pricing' }, GATEWAY, 'pricing'],
    [
      'the image entry point with an argument',
      {},
      ['node', 'dist/gateway/role.js', 'promotions'],
      'promotions',
    ],
    ['a subgraph main, compiled', {}, ['node', '/app/dist/subgraphs/procurement/main.js'], 'procurement'],
    ['a subgraph main, from source', {}, ['node', 'subgraphs/pricing/main.ts'], 'pricing'],
    ['the gateway main, distributed', { TOPOLOGY: 'distributed' }, GATEWAY, 'gateway'],
    ['the gateway main (npm start)', {}, GATEWAY, 'embedded'],
    ['an unknown ROLE is not trusted', { ROLE: 'evil' }, GATEWAY, 'embedded'],
  ])('%s', (_label, env, argv, role) => {
    expect(roleOf(env, argv)).toBe(role);
  });
});

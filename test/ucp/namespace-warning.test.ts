/**
 * The start-up warning for UCP_MERCHANT_NAMESPACE left at its placeholder default on a public
 * endpoint (gateway/agent/ucp/index.ts logs it; the condition is pure, in payment.ts).
 */
import { describe, expect, it } from 'vitest';
import { defaultNamespaceInPublic } from '../../gateway/agent/ucp/payment.ts';
import { loadConfig } from '../../lib/config.ts';
import { ucpApiBaseUrl } from '../../lib/public-origin.ts';

describe('defaultNamespaceInPublic', () => {
  it.each([
    'https://shop.acme-industrial.com/ucp',
    'https://api.acme.io:8443/ucp',
    'http://93.184.215.14/ucp',
  ])('warns for the default namespace on %s', (endpoint) => {
    expect(defaultNamespaceInPublic('com.example', endpoint)).toBe(true);
  });

  it.each([
    'http://127.0.0.1:8080/ucp',
    'http://localhost:8080/ucp',
    'http://shop.localhost/ucp',
    'http://10.0.0.5/ucp',
    'http://[::1]:8080/ucp',
    'https://merchant.example.com/ucp',
    'https://example.org/ucp',
    'https://shop.example/ucp',
    'https://shop.test/ucp',
    'http://printer.local/ucp',
    // A documentation address (RFC 5737, TEST-NET-3) is an example host as example.org is.
    'http://203.0.113.7/ucp',
  ])('stays quiet on a local or example host: %s', (endpoint) => {
    expect(defaultNamespaceInPublic('com.example', endpoint)).toBe(false);
  });

  it('stays quiet once the namespace is the merchant’s own', () => {
    expect(defaultNamespaceInPublic('com.acmeindustrial', 'https://shop.acme-industrial.com/ucp')).toBe(
      false,
    );
  });

  it('judges the endpoint the configuration gives platforms (PUBLIC_BASE_URL, or UCP_API_BASE_URL)', () => {
    const at = (env: Record<string, string>) => {
      const c = loadConfig(env);
      return defaultNamespaceInPublic(c.UCP_MERCHANT_NAMESPACE, ucpApiBaseUrl(c));
    };
    expect(at({})).toBe(false);
    expect(at({ PUBLIC_BASE_URL: 'https://shop.acme-industrial.com' })).toBe(true);
    expect(at({ UCP_API_BASE_URL: 'https://ucp.acme-industrial.com/v1' })).toBe(true);
    expect(
      at({
        PUBLIC_BASE_URL: 'https://shop.acme-industrial.com',
        UCP_MERCHANT_NAMESPACE: 'com.acmeindustrial',
      }),
    ).toBe(false);
  });
});

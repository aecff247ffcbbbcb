/**
 * The in-process marker that lets an MCP tool call carry the identity its /mcp request proved
 * into the REST route (gateway/agent/identity/in-process.ts): only `injectAgentCall` can make
 * it; nothing a client sends over a socket, nor a plain `inject`, is believed. The routes
 * here have identity as their only step, with no trusted proxy and no TLS, so the header
 * alone can never pass.
 */
import { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityStep } from '../../gateway/agent/identity/identity.ts';
import { injectAgentCall } from '../../gateway/agent/identity/in-process.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import { createLogger } from '../../lib/logger.ts';
import { AGENT } from '../procurement/support/agent.ts';

let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  app = Fastify();
  const identity = identityStep({
    trustDomains: ['example.org'],
    trustedProxies: [],
    servedHosts: servedHosts({ SERVED_HOSTS: [], HOST: '127.0.0.1', PORT: 8080 }),
    tls: false,
    log: createLogger({ LOG_LEVEL: 'silent' }),
  });
  app.get('/who', { onRequest: [identity] }, async (req) => ({ identity: req.agent.identity?.id }));
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => app.close());

describe('an outsider cannot claim an in-process identity', () => {
  it.each([
    ['X-Spiffe-Id alone', { 'x-spiffe-id': AGENT }],
    [
      'X-Spiffe-Id with a light-my-request user agent',
      { 'x-spiffe-id': AGENT, 'user-agent': 'lightMyRequest' },
    ],
    ['X-Spiffe-Id with the MCP user agent', { 'x-spiffe-id': AGENT, 'user-agent': 'agent-commerce-mcp' }],
    ['X-Spiffe-Id and X-Forwarded-For 127.0.0.1', { 'x-spiffe-id': AGENT, 'x-forwarded-for': '127.0.0.1' }],
  ])('refuses %s over a socket with 401', async (_name, headers) => {
    const res = await fetch(`${url}/who`, { headers });
    expect(res.status).toBe(401);
  });

  it('refuses a plain in-process inject carrying X-Spiffe-Id with 401', async () => {
    const res = await app.inject({ method: 'GET', url: '/who', headers: { 'x-spiffe-id': AGENT } });
    expect(res.statusCode).toBe(401);
  });

  it('refuses an inject with another Request class with 401', async () => {
    // Same name as the marker class, not the same class.
    class InProcessAgentCall extends IncomingMessage {}
    const res = await app.inject({
      method: 'GET',
      url: '/who',
      headers: { 'x-spiffe-id': AGENT },
      Request: InProcessAgentCall,
    } as InjectOptions);
    expect(res.statusCode).toBe(401);
  });
});

describe('injectAgentCall', () => {
  it('carries the identity it is given', async () => {
    const res = await injectAgentCall(app, `${AGENT}/sub`, { method: 'GET', url: '/who' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ identity: `${AGENT}/sub` });
  });

  it('cannot be redirected to another identity by the headers it is passed', async () => {
    const res = await injectAgentCall(app, AGENT, {
      method: 'GET',
      url: '/who',
      headers: { 'x-spiffe-id': `${AGENT}/other`, 'X-Spiffe-Id': `${AGENT}/other` },
    });
    expect(res.json()).toEqual({ identity: AGENT });
  });

  it('still checks the identity as any other (no bypass of the SPIFFE rules)', async () => {
    for (const id of [`${AGENT}-evil`, 'spiffe://evil.org/ns/ai/sa/procurement-agent', '']) {
      const res = await injectAgentCall(app, id, { method: 'GET', url: '/who' });
      expect(res.statusCode, id).toBe(401);
    }
  });
});

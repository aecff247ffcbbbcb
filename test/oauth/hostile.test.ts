/**
 * Identity linking against the attacks the specifications name (RFC 6749 §10, RFC 7636, RFC 9700,
 * identity-linking.md "Security Considerations"): each refused with a clear 4xx and RFC 6749's
 * error body (token endpoint) or a 401/403 with an RFC 6750 challenge (UCP endpoint). One system
 * for all of it; the parts are in ./hostile/ (support.ts: the context they share).
 */
import { authorizationTests, consentTests } from './hostile/authorization.ts';
import { hostileContext } from './hostile/support.ts';
import { tokenTests } from './hostile/token.ts';
import { ucpEndpointTests } from './hostile/ucp-endpoint.ts';

/** The parts in the order they ran as one file, on one system. */
const o = hostileContext();
authorizationTests(o);
tokenTests(o);
ucpEndpointTests(o);
consentTests(o);

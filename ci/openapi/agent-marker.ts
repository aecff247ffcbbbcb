/**
 * What marks an operation agent-facing. Its own module because the running gateway reads the
 * agent contract (gateway/contracts/documents.ts → agent-contract.ts) and must not load the
 * Spectral rules beside it: Spectral is a devDependency, absent from the production image.
 */
export const AGENT_MARKER = 'x-agent-facing';
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

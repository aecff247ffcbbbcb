/**
 * A checkout API key for a bench's ACP load, issued as an operator would (GraphQL
 * `issueCheckoutApiKey`, role agents:admin), bound to its own agent identity.
 */
import { gql, testConfig } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';

const ISSUE = `mutation($i: IssueCheckoutApiKeyInput!) { issueCheckoutApiKey(input: $i) { key } }`;

/**
 * Issues the key on the system at `url` (whose DATA_DIR signs the operator's token); with
 * `ucpProfile`, bound to the UCP platform profiles there (a URL or an origin).
 */
export async function issueBenchKey(
  url: string,
  dataDir: string,
  name: string,
  ucpProfile?: string,
): Promise<string> {
  const token = await mintDevToken(testConfig({ DATA_DIR: dataDir }), {
    subject: 'bench',
    roles: ['agents:admin'],
  });
  const issued = await gql(url, ISSUE, {
    token,
    variables: {
      i: {
        name,
        spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/${name}`,
        agentId: `agent-${name}-01`,
        scopes: ['orders:create'],
        ...(ucpProfile ? { ucpProfile } : {}),
      },
    },
  });
  const key = (issued.data?.issueCheckoutApiKey as { key?: string } | undefined)?.key;
  if (!key) throw new Error(`no checkout API key: ${JSON.stringify(issued.errors)}`);
  return key;
}

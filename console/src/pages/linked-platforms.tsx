/**
 * Platforms linked by OAuth 2.0 on the Agents page (docs/identity-linking.md; agents:admin): which
 * platform a buyer administrator linked to which agent identity, with which UCP scopes, and a
 * Revoke that refuses its tokens on every gateway at once.
 */
import { graphql } from '../api.ts';
import { operation } from '../operations.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { ConfirmButton, Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

// Registered operations (schemas/operations/linked-platforms.graphql, revoke-linked-platform.graphql).
const LINKED = operation('LinkedPlatforms');
const REVOKE = operation('RevokeLinkedPlatform');

interface LinkedPlatform {
  grantId: string;
  clientId: string;
  clientName: string;
  linkedBy: string;
  spiffeId: string;
  agentId: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

export function LinkedPlatforms() {
  const links = useAsync(
    () => graphql<{ linkedPlatforms: LinkedPlatform[] }>(LINKED).then((d) => d.linkedPlatforms),
    [],
  );
  const revoke = useAction((l: LinkedPlatform) =>
    graphql<{ revokeLinkedPlatform: { grantId: string } }>(REVOKE, { grantId: l.grantId }).then(
      () => `Revoked ${l.clientName}: its tokens are refused on every gateway now.`,
    ),
  );
  return (
    <section aria-labelledby="linked-h">
      <h2 id="linked-h">Linked platforms (OAuth 2.0)</h2>
      <p class="note">
        A platform a buyer administrator linked on the consent page acts as the agent identity chosen there,
        under its spend policy, approvals and rate limit.
      </p>
      {revoke.state === 'error' ? <ProblemView error={revoke.error} /> : null}
      {revoke.state === 'ok' ? (
        <p role="status" class="ok">
          {revoke.data}
        </p>
      ) : null}
      {links.state === 'loading' && !links.data ? <Loading what="linked platforms" /> : null}
      {links.state === 'error' ? <ProblemView error={links.error} /> : null}
      {links.state === 'ok' && links.data.length === 0 ? <Empty>No platform is linked.</Empty> : null}
      {links.data?.length ? (
        <ul class="cards" data-testid="linked-platforms">
          {links.data.map((l) => {
            const revoked = l.revokedAt !== null;
            return (
              <li key={l.grantId} class={`card ${revoked ? 'blocked' : ''}`} data-testid="linked-platform">
                <p>
                  <strong>{l.clientName}</strong> <code>{l.clientId}</code>{' '}
                  <span class={`tag ${revoked ? 'bad' : 'good'}`}>{revoked ? 'REVOKED' : 'LINKED'}</span>
                </p>
                <dl>
                  <div>
                    <dt>Acts as</dt>
                    <dd>
                      <code>{l.spiffeId}</code>
                      <br />
                      agent id {l.agentId}
                    </dd>
                  </div>
                  <div>
                    <dt>Scopes</dt>
                    <dd>{l.scopes.join(', ')}</dd>
                  </div>
                  <div>
                    <dt>Linked</dt>
                    <dd>
                      <Time at={l.createdAt} /> by {l.linkedBy}
                    </dd>
                  </div>
                  {revoked ? (
                    <div>
                      <dt>Revoked</dt>
                      <dd>
                        <Time at={l.revokedAt} /> by {l.revokedBy}
                      </dd>
                    </div>
                  ) : null}
                </dl>
                {revoked ? null : (
                  <ConfirmButton
                    action="revoke"
                    what={l.grantId}
                    whatHidden
                    onConfirm={() => void revoke.run(l).then(() => links.reload())}
                  />
                )}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}

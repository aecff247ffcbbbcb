/**
 * The part of oidc-provider 8's API this system uses (gateway/oauth/). The package ships no
 * types and @types/oidc-provider follows later majors; what is declared here is what the
 * library's README and lib/ document for 8.x.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    uid?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ClientMetadata {
    client_id: string;
    [key: string]: unknown;
  }

  export interface KoaContextWithOIDC {
    oidc: {
      client?: { clientId: string; clientName?: string; [key: string]: unknown };
      [key: string]: unknown;
    };
    [key: string]: unknown;
  }

  export interface Interaction {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
    exp: number;
  }

  export class Grant {
    constructor(props: { accountId: string; clientId: string });
    jti: string;
    accountId: string;
    clientId: string;
    addResourceScope(resource: string, scope: string): void;
    getResourceScopeFiltered(resource: string, scopes: string[]): Set<string>;
    save(ttl?: number): Promise<string>;
    destroy(): Promise<void>;
    static find(id: string): Promise<Grant | undefined>;
  }

  export interface ClientModel {
    clientId: string;
    clientName?: string;
    [key: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    Grant: typeof Grant;
    Client: { find(id: string): Promise<ClientModel | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    on(event: string, listener: (...args: never[]) => void): this;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidGrant: new (description?: string) => Error;
    AccessDenied: new (description?: string) => Error;
  };
  export default Provider;
}

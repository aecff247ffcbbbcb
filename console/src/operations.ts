/**
 * The GraphQL operations the console's pages send (issue 14, safelist mode): each is a
 * registered operation of schemas/operations/, sent as the manifest prints it. The gateway's
 * safelist (GRAPHQL_SAFELIST) runs a document only when its sha256 is a manifest id, so the
 * text must be the manifest's byte for byte; taking it from the manifest (rather than a copy in
 * the console) keeps the two from drifting. The GraphiQL explorer sends what the operator types
 * and is not bound by this.
 */
import manifest from '../../schemas/operations/manifest.json' with { type: 'json' };

/** The names the console sends; a name missing from the manifest fails the build's first page load, loudly. */
export type ConsoleOperation =
  | 'PurchaseOrderSearch'
  | 'Carts'
  | 'Promotions'
  | 'UpsertPromotion'
  | 'PreviewPromotions'
  | 'SpendPolicies'
  | 'SetSpendPolicy'
  | 'DeleteSpendPolicy'
  | 'PendingApprovals'
  | 'ApprovalDecisions'
  | 'ApprovePurchaseOrder'
  | 'RejectPurchaseOrder'
  | 'PurchaseOrder'
  | 'OrderAuthorization'
  | 'WebhookEndpoints'
  | 'WebhookDeliveries'
  | 'RegisterWebhookEndpoint'
  | 'RotateWebhookSecret'
  | 'DisableWebhookEndpoint'
  | 'ReplayWebhookDelivery'
  | 'CheckoutApiKeys'
  | 'IssueCheckoutApiKey'
  | 'RevokeCheckoutApiKey'
  | 'SetCheckoutWebhook'
  | 'LinkedPlatforms'
  | 'RevokeLinkedPlatform'
  | 'OAuthClients'
  | 'RegisterOAuthClient'
  | 'CheckoutSessions'
  | 'SearchProducts'
  | 'CatalogProduct'
  | 'StartCatalogImport'
  | 'AppendCatalogImport'
  | 'CommitCatalogImport'
  | 'CancelCatalogImport'
  | 'CatalogImport';

/** The manifest's printed text of a registered operation (what hashes to its id). */
export function operation(name: ConsoleOperation): string {
  const op = manifest.operations.find((o) => o.name === name);
  if (!op) throw new Error(`schemas/operations/manifest.json has no ${name}`);
  return op.body;
}

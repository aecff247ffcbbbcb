/** Errors of the pricing domain, as values with a type; REST and GraphQL map them in one place each. */
export class UnknownSku extends Error {
  override name = 'UnknownSku';
  constructor(readonly sku: string) {
    super(`unknown sku: ${sku}`);
  }
}

export class NoBasePrice extends Error {
  override name = 'NoBasePrice';
  constructor(
    readonly sku: string,
    readonly currency: string,
  ) {
    super(`no base price for ${sku} in currency ${currency}`);
  }
}

export class InvalidBasePrice extends Error {
  override name = 'InvalidBasePrice';
}

export type CatalogMiss = UnknownSku | NoBasePrice;

/** Refusals of the checkout API key operations; graphql.ts maps them to error codes in one place. */
export class ApiKeyInputInvalid extends Error {
  override name = 'ApiKeyInputInvalid';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class ApiKeyNotFound extends Error {
  override name = 'ApiKeyNotFound';
}

/** The operation does not fit the key's state (a webhook for a revoked key). */
export class ApiKeyConflict extends Error {
  override name = 'ApiKeyConflict';
}

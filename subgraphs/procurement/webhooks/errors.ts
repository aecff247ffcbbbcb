/** Refusals of the webhook admin operations; graphql.ts maps them to error codes in one place. */
export class WebhookInputInvalid extends Error {
  override name = 'WebhookInputInvalid';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class WebhookNotFound extends Error {
  override name = 'WebhookNotFound';
}

/** The operation does not fit the current state (a disabled endpoint, a delivery still pending). */
export class WebhookConflict extends Error {
  override name = 'WebhookConflict';
}

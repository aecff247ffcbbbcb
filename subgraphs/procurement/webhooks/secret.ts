import { randomBytes } from 'node:crypto';

/**
 * A Standard Webhooks signing secret: `whsec_` and the base64 of 24 to 64 random bytes (the
 * specification's range); 32 bytes is HMAC-SHA256's block-size-friendly key length.
 */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

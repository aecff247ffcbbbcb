import { createHash, randomBytes } from 'node:crypto';

/**
 * The secret form of a checkout API key: `acp_` + its id + `_` + 32 random bytes in base64url
 * (43 characters). The id inside lets an operator tell which key leaked from the text alone;
 * the 256 random bits are what authenticates.
 */
const KEY_ID = /^ak_[0-9a-f]{24}$/;
const SECRET_KEY = /^acp_ak_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/;
export const SECRET_KEY_LENGTH = 'acp_ak_'.length + 24 + 1 + 43;

export const newKeyId = (): string => `ak_${randomBytes(12).toString('hex')}`;

export const newSecretKey = (id: string): string => `acp_${id}_${randomBytes(32).toString('base64url')}`;

export const isKeyId = (id: string): boolean => KEY_ID.test(id);

/** Has the shape of a key this system issues (says nothing about whether it is valid). */
export const isSecretKeyShaped = (key: string): boolean =>
  key.length === SECRET_KEY_LENGTH && SECRET_KEY.test(key);

/**
 * What is stored and looked up: SHA-256 of the whole key, hex. A slow password hash (scrypt,
 * argon2) protects low-entropy secrets against guessing after a database leak; a key is 256
 * random bits, so no guess can find one from its hash, and a fast hash keeps verification at
 * a microsecond on every request.
 */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/**
 * The `crypto` standard plugin (spec/plugins/crypto.md): secure random values, AES-256-GCM encryption,
 * UUIDs, SHA-256 and HMAC-SHA256 digests, and CSRF protection (csrf_token, csrf_verify, `guard csrf`). Uses node:crypto only.
 */
import { definePlugin } from '../../plugins/sdk.js';
import { registerCsrf } from './csrf-natives.js';
import { registerDigests } from './digests.js';
import { registerCryptoNatives } from './natives.js';

/** The crypto plugin definition. */
export const crypto = definePlugin({
  name: 'crypto',
  version: '1.0.0',
  dependencies: ['core'],
  setup(rvm) {
    registerCryptoNatives(rvm);
    registerDigests(rvm);
    registerCsrf(rvm);
  },
});

export default crypto;

/**
 * The `auth` standard plugin: JWT (jose, HS256), Argon2id password hashing, the caller's identity
 * (`auth_user()`, `auth_check()`) and the `auth`, `role` and `api_key` guards. Written only
 * against the plugin SDK. Each facility registers from its own module, so the later parts
 * (TOTP, one-time codes, social login) slot in beside them.
 */
import { definePlugin } from '../../plugins/sdk.js';
import { ApiKeyring } from './api-keys.js';
import { registerGuards } from './guards.js';
import { registerJwt } from './jwt.js';
import { registerPasswords } from './passwords.js';
import { AuthSession, registerSession } from './session.js';
import { registerSocialLogin } from './social/login.js';
import { storedUserLookup } from './stored-user.js';

/** The auth plugin definition; its state (key, token cache, API keys) lives per loaded app. */
export const auth = definePlugin({
  name: 'auth',
  version: '1.0.0',
  setup(rvm) {
    // auth_user() merges the stored `User` whose id is the token's `sub`, when there is one.
    const session = new AuthSession({ storedUser: storedUserLookup(rvm.storedRecords) });
    const apiKeys = new ApiKeyring();
    registerJwt(rvm);
    registerPasswords(rvm);
    registerSession(rvm, session);
    registerGuards(rvm, session, apiKeys);
    registerSocialLogin(rvm);
  },
});

export default auth;

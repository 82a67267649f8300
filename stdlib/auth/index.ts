/**
 * The `auth` standard plugin: JWT (jose, HS256), Argon2id password hashing, the caller's identity
 * (`auth_user()`, `auth_check()`), the `auth`, `role` and `api_key` guards, TOTP and backup
 * codes, one-time codes over WhatsApp, and social login with PKCE. Written only against the
 * plugin SDK; each facility registers from its own module.
 */
import { definePlugin } from '../../plugins/sdk.js';
import { ApiKeyring } from './api-keys.js';
import { registerBackupCodes } from './backup-codes.js';
import { registerGuards } from './guards.js';
import { registerJwt } from './jwt.js';
import { registerPasswords } from './passwords.js';
import { registerPhone } from './phone.js';
import { AuthSession, registerSession } from './session.js';
import { registerSocialLogin } from './social/login.js';
import { storedUserLookup } from './stored-user.js';
import { registerTotp } from './totp.js';
import { registerWhatsApp } from './whatsapp.js';

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
    registerTotp(rvm);
    registerBackupCodes(rvm);
    registerPhone(rvm);
    registerWhatsApp(rvm);
    registerSocialLogin(rvm);
  },
});

export default auth;

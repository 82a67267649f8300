/**
 * The social-login natives: `auth_<p>_login()` (the provider URL to redirect to, with the signed
 * flow cookie set) and `auth_<p>_callback()` (state checked, code exchanged, the profile
 * returned) for Google, GitHub and Microsoft. Every failure is a coded answer (SocialFailure).
 */
import {
  HTTP,
  constantTimeEqual,
  setCookie,
  type CallContext,
  type ErrorResponseSpec,
  type Halt,
  type HttpErrorEntry,
  type PluginApi,
} from '../../../plugins/sdk.js';
import { FLOW_TTL_MS, flowCookieName, openFlow, sealFlow, type FlowState } from './flow-cookie.js';
import { SocialFailure, loadOauth } from './provider-http.js';
import { NotConfigured, PROVIDERS, providerConfig, type ProviderConfig, type ProviderName } from './providers.js';
import { readProfile, type SocialProfile } from './profile.js';
import { exchangeCode, type JwksCaches } from './token-exchange.js';

/** Key prefix in `ctx.store` of flows whose callback ran: a replay with the same cookie is refused before the provider is asked. */
const USED_FLOW_KEY = 'auth.oauth.used:';

/** Longest `code` or `state` taken from the query: providers' codes are a few hundred characters. */
export const MAX_CALLBACK_PARAM_LENGTH = 2048;

const TITLES: Readonly<Record<ProviderName, string>> = { google: 'Google', github: 'GitHub', microsoft: 'Microsoft' };

function spec(entry: HttpErrorEntry, description: string): ErrorResponseSpec {
  return { status: entry.status, code: entry.code, description };
}

const NOT_CONFIGURED = spec(HTTP.oauth_not_configured, 'The provider has no client id/secret or redirect URI configured.');

/** What the callback can answer, for the reference. */
const CALLBACK_RESPONSES: readonly ErrorResponseSpec[] = [
  spec(HTTP.oauth_cookie_missing, 'The sign-in cookie is absent or older than 10 minutes.'),
  spec(HTTP.oauth_cookie_invalid, 'The sign-in cookie was altered.'),
  spec(HTTP.oauth_state_mismatch, '`state` differs from the one the sign-in started with.'),
  spec(HTTP.oauth_replayed, 'This callback already ran.'),
  spec(HTTP.oauth_denied, 'The user declined at the provider.'),
  spec(HTTP.oauth_provider_error, 'The provider answered another error.'),
  spec(HTTP.oauth_code_missing, 'No `code` in the query.'),
  spec(HTTP.oauth_exchange_failed, 'The token endpoint refused the code.'),
  spec(HTTP.oauth_invalid_id_token, 'The ID token failed its checks.'),
  spec(HTTP.oauth_provider_unavailable, 'The provider could not be reached or answered nonsense.'),
  spec(HTTP.oauth_provider_timeout, 'The provider did not answer in time.'),
  NOT_CONFIGURED,
];

/** The request's configuration of `provider`, or the coded 503 saying what to set. */
function configOf(ctx: CallContext, provider: ProviderName): ProviderConfig {
  try {
    return providerConfig(provider, ctx.app.secrets);
  } catch (error) {
    if (error instanceof NotConfigured) throw new SocialFailure(HTTP.oauth_not_configured, error.message);
    throw error;
  }
}

/** Writes the flow cookie (or its deletion): HttpOnly, SameSite=Lax, only sent to the callback path. */
function writeFlowCookie(ctx: CallContext, config: ProviderConfig, value: string, maxAgeSeconds: number): void {
  const callback = new URL(config.redirectUri);
  // Secure follows where the browser will send it back: an https callback, or a request that came over TLS.
  setCookie(ctx, flowCookieName(config.provider), value, {
    httpOnly: true,
    sameSite: 'Lax',
    path: callback.pathname,
    maxAge: maxAgeSeconds,
    secure: callback.protocol === 'https:' || ctx.request.secure,
  });
}

/** Runs a native's body, answering a SocialFailure as its coded error. */
async function answering<T>(ctx: CallContext, body: () => Promise<T>): Promise<T | Halt> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof SocialFailure)) throw error;
    ctx.log(`social login: ${error.entry.code}: ${error.message}`);
    return ctx.fail(error.entry.status, error.entry.message, error.entry.code);
  }
}

/** auth_<p>_login(): a new flow (state, S256 verifier, nonce) in the cookie; the authorize URL. */
async function login(ctx: CallContext, provider: ProviderName, now: () => number): Promise<string> {
  const oauth = await loadOauth();
  const config = configOf(ctx, provider);
  const flow: FlowState = {
    provider,
    state: oauth.generateRandomState(),
    verifier: oauth.generateRandomCodeVerifier(),
    nonce: config.oidc ? oauth.generateRandomNonce() : null,
    expiresAt: now() + FLOW_TTL_MS,
  };
  const url = new URL(config.authUrl);
  url.searchParams.set('client_id', config.clientId);
  url.searchParams.set('redirect_uri', config.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', config.scope);
  url.searchParams.set('state', flow.state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(flow.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (flow.nonce !== null) url.searchParams.set('nonce', flow.nonce);
  writeFlowCookie(ctx, config, sealFlow(ctx.app.secrets.appSecret(), flow), FLOW_TTL_MS / 1000);
  return url.href;
}

/** One query parameter as text, or null when absent, repeated or too long. */
function queryParam(ctx: CallContext, name: string): string | null {
  const value = ctx.request.query[name];
  return typeof value === 'string' && value.length <= MAX_CALLBACK_PARAM_LENGTH ? value : null;
}

/** auth_<p>_callback(): the cookie's flow, checked against the query, exchanged for the profile. */
async function callback(ctx: CallContext, provider: ProviderName, now: () => number, jwks: JwksCaches): Promise<SocialProfile> {
  const config = configOf(ctx, provider);
  const cookie = ctx.request.cookies[flowCookieName(provider)];
  if (cookie === undefined || cookie === '') throw new SocialFailure(HTTP.oauth_cookie_missing);
  // The cookie serves one callback, whatever its outcome.
  writeFlowCookie(ctx, config, '', 0);
  const flow = openFlow(ctx.app.secrets.appSecret(), provider, cookie, now());
  if (flow === 'expired') throw new SocialFailure(HTTP.oauth_cookie_missing, 'the sign-in cookie has expired');
  if (flow === 'invalid') throw new SocialFailure(HTTP.oauth_cookie_invalid);
  const state = queryParam(ctx, 'state');
  if (state === null || !constantTimeEqual(state, flow.state)) throw new SocialFailure(HTTP.oauth_state_mismatch);
  const error = ctx.request.query.error;
  if (error !== undefined) throw new SocialFailure(error === 'access_denied' ? HTTP.oauth_denied : HTTP.oauth_provider_error);
  const code = queryParam(ctx, 'code');
  if (code === null || code === '') throw new SocialFailure(HTTP.oauth_code_missing);
  if (!(await ctx.store.compareAndSet(USED_FLOW_KEY + flow.state, undefined, true, Math.max(1, flow.expiresAt - now())))) {
    throw new SocialFailure(HTTP.oauth_replayed);
  }
  const tokens = await exchangeCode(ctx, config, flow, code, jwks);
  return readProfile(ctx, config, tokens);
}

/** Registers auth_<p>_login and auth_<p>_callback for the three providers. */
export function registerSocialLogin(rvm: PluginApi, now: () => number = Date.now): void {
  const jwks: JwksCaches = new Map();
  for (const provider of PROVIDERS) {
    const title = TITLES[provider];
    rvm.native(`auth_${provider}_login`, (ctx) => answering(ctx, () => login(ctx, provider, now)), {
      params: [],
      returns: 'text',
      doc: `Starts a ${title} sign-in: sets the signed, HttpOnly flow cookie (state, PKCE verifier${provider === 'github' ? '' : ', nonce'}; 10 minutes, scoped to the callback path) and returns the ${title} URL to redirect to: response.redirect(auth_${provider}_login()).`,
      responses: [NOT_CONFIGURED],
      headers: ['Set-Cookie'],
    });
    rvm.native(`auth_${provider}_callback`, (ctx) => answering(ctx, () => callback(ctx, provider, now, jwks)), {
      params: [],
      returns: 'object',
      doc: `Completes a ${title} sign-in on its redirect_uri: checks state against the flow cookie, exchanges the code with the PKCE verifier${provider === 'github' ? '' : ', validates the ID token'}, deletes the cookie and returns {provider, id, email, email_verified, name, avatar_url}; failures end the request with a coded 4xx (502/504 when ${title} is down).`,
      responses: [...CALLBACK_RESPONSES],
      headers: ['Set-Cookie'],
    });
  }
}

/**
 * The three social-login providers as data: their real endpoints (each provider's OpenID/OAuth documentation), scopes and
 * issuers, and the configuration an app gives them through the environment (spec/plugins/auth.md:
 * `<P>_CLIENT_ID`, `<P>_CLIENT_SECRET`, `<P>_REDIRECT_URI`, `<P>_AUTH_URL`, `<P>_TOKEN_URL`,
 * `<P>_USERINFO_URL`, `<P>_JWKS_URL`, `GITHUB_USER_URL`, `GITHUB_EMAILS_URL`, `MICROSOFT_TENANT`),
 * so tests point every endpoint at a local fake.
 */
import type { SecretSource } from '../../../plugins/sdk.js';

/** The providers rvm signs in with. */
export type ProviderName = 'google' | 'github' | 'microsoft';

/** Every provider, in the order the natives are registered. */
export const PROVIDERS: readonly ProviderName[] = ['google', 'github', 'microsoft'];

/** The origin of this server as the outside world reaches it; the default redirect_uri is built from it. */
export const PUBLIC_URL_ENV = 'PUBLIC_URL';

/**
 * Longest wait for one provider call (token, JWKS, userinfo, GitHub API). They answer in well
 * under a second; 5 s leaves room for a slow moment while a hung provider still gets a 504 well
 * inside the request's 30 s wall time, not a deadline error. `OAUTH_TIMEOUT_MS` sets another,
 * between the two bounds below (tests use a short one).
 */
export const PROVIDER_TIMEOUT_MS = 5_000;
export const OAUTH_TIMEOUT_ENV = 'OAUTH_TIMEOUT_MS';
export const MIN_PROVIDER_TIMEOUT_MS = 100;
/** Below the request's default 30 s wall time, so a hung provider answers 504, not a deadline error. */
export const MAX_PROVIDER_TIMEOUT_MS = 25_000;

/** Microsoft's tenant when `MICROSOFT_TENANT` is not set: personal and work accounts alike. */
export const DEFAULT_MICROSOFT_TENANT = 'common';

/** Microsoft tenants that are not one directory: the ID token's issuer is a template filled with its `tid`. */
const MULTI_TENANTS: ReadonlySet<string> = new Set(['common', 'organizations', 'consumers']);

/** A tenant as it may appear in an endpoint path: a GUID, a domain name or one of the multi-tenant words. */
const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.-]{0,99}$/;

/** A tenant id (GUID): Microsoft's issuer names the directory by it. */
const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Google's two spellings of its issuer (OpenID Connect, "Validating an ID token"). */
export const GOOGLE_ISSUERS: readonly string[] = ['https://accounts.google.com', 'accounts.google.com'];

/** One provider's fixed facts. */
interface ProviderSpec {
  /** `GOOGLE`: the prefix of its environment variables. */
  readonly env: string;
  /** OpenID Connect (nonce, ID token) or plain OAuth 2 (GitHub). */
  readonly oidc: boolean;
  readonly scope: string;
  readonly authUrl: (tenant: string) => string;
  readonly tokenUrl: (tenant: string) => string;
  readonly userinfoUrl: string;
  readonly jwksUrl: (tenant: string) => string;
}

const SPECS: Readonly<Record<ProviderName, ProviderSpec>> = {
  google: {
    env: 'GOOGLE',
    oidc: true,
    scope: 'openid email profile',
    authUrl: () => 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: () => 'https://oauth2.googleapis.com/token',
    userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    jwksUrl: () => 'https://www.googleapis.com/oauth2/v3/certs',
  },
  github: {
    env: 'GITHUB',
    oidc: false,
    scope: 'read:user user:email',
    authUrl: () => 'https://github.com/login/oauth/authorize',
    tokenUrl: () => 'https://github.com/login/oauth/access_token',
    userinfoUrl: 'https://api.github.com/user',
    jwksUrl: () => '',
  },
  microsoft: {
    env: 'MICROSOFT',
    oidc: true,
    scope: 'openid profile email',
    authUrl: (t) => `https://login.microsoftonline.com/${t}/oauth2/v2.0/authorize`,
    tokenUrl: (t) => `https://login.microsoftonline.com/${t}/oauth2/v2.0/token`,
    userinfoUrl: 'https://graph.microsoft.com/oidc/userinfo',
    jwksUrl: (t) => `https://login.microsoftonline.com/${t}/discovery/v2.0/keys`,
  },
};

/** GitHub's e-mail list, read when `/user` shows no public address. */
const GITHUB_EMAILS_URL = 'https://api.github.com/user/emails';

/** A provider configured for one app: everything a flow needs, endpoints checked. */
export interface ProviderConfig {
  readonly provider: ProviderName;
  readonly oidc: boolean;
  readonly scope: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** From `<P>_REDIRECT_URI`, else `PUBLIC_URL` + `/auth/<p>/callback`: never from the request. */
  readonly redirectUri: string;
  readonly authUrl: string;
  readonly tokenUrl: string;
  /** Google and Microsoft: OIDC userinfo; GitHub: `/user`. */
  readonly userinfoUrl: string;
  /** GitHub only: `/user/emails`. */
  readonly emailsUrl: string;
  /** Google and Microsoft: the keys ID tokens are signed with. */
  readonly jwksUrl: string;
  /** Microsoft only. */
  readonly tenant: string;
  /** The longest wait for one call to the provider: PROVIDER_TIMEOUT_MS unless `OAUTH_TIMEOUT_MS` says otherwise. */
  readonly timeoutMs: number;
}

/** Why a provider cannot be used: the message names the variable to set. */
export class NotConfigured extends Error {}

/** True for `http://` URLs on a loopback host: the only plain-HTTP endpoints allowed (a local fake, a dev proxy). */
export function isLoopbackHttp(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname;
  return parsed.protocol === 'http:' && (host === '127.0.0.1' || host === 'localhost' || host === '[::1]');
}

/** The URL as given when it is https, or http on loopback; NotConfigured naming `variable` otherwise. */
function endpoint(variable: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NotConfigured(`${variable} is not a URL`);
  }
  if (parsed.protocol !== 'https:' && !isLoopbackHttp(url))
    throw new NotConfigured(`${variable} must be an https URL (plain http only on 127.0.0.1 or localhost)`);
  return parsed.href;
}

/**
 * The provider's configuration in this app, read from the environment on every call (cheap, and
 * a rotated secret applies at once). Throws NotConfigured naming what is missing or wrong.
 */
export function providerConfig(provider: ProviderName, secrets: SecretSource): ProviderConfig {
  const spec = SPECS[provider];
  const env = (suffix: string): string | undefined => {
    const value = secrets.env(`${spec.env}_${suffix}`);
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const clientId = env('CLIENT_ID');
  const clientSecret = env('CLIENT_SECRET');
  if (clientId === undefined || clientSecret === undefined) {
    throw new NotConfigured(`${provider} sign-in needs ${spec.env}_CLIENT_ID and ${spec.env}_CLIENT_SECRET`);
  }
  const tenant = provider === 'microsoft' ? (env('TENANT') ?? DEFAULT_MICROSOFT_TENANT) : '';
  if (provider === 'microsoft' && !TENANT_PATTERN.test(tenant))
    throw new NotConfigured('MICROSOFT_TENANT must be a tenant id, a domain, common, organizations or consumers');
  return {
    provider,
    oidc: spec.oidc,
    scope: spec.scope,
    clientId,
    clientSecret,
    redirectUri: redirectUri(provider, spec.env, secrets),
    authUrl: endpoint(`${spec.env}_AUTH_URL`, env('AUTH_URL') ?? spec.authUrl(tenant)),
    tokenUrl: endpoint(`${spec.env}_TOKEN_URL`, env('TOKEN_URL') ?? spec.tokenUrl(tenant)),
    userinfoUrl:
      provider === 'github'
        ? endpoint('GITHUB_USER_URL', env('USER_URL') ?? spec.userinfoUrl)
        : endpoint(`${spec.env}_USERINFO_URL`, env('USERINFO_URL') ?? spec.userinfoUrl),
    emailsUrl: provider === 'github' ? endpoint('GITHUB_EMAILS_URL', env('EMAILS_URL') ?? GITHUB_EMAILS_URL) : '',
    jwksUrl: spec.oidc ? endpoint(`${spec.env}_JWKS_URL`, env('JWKS_URL') ?? spec.jwksUrl(tenant)) : '',
    tenant,
    timeoutMs: providerTimeout(secrets),
  };
}

/** `OAUTH_TIMEOUT_MS` when set (whole milliseconds within the bounds), else PROVIDER_TIMEOUT_MS. */
function providerTimeout(secrets: SecretSource): number {
  const text = secrets.env(OAUTH_TIMEOUT_ENV)?.trim();
  if (!text) return PROVIDER_TIMEOUT_MS;
  const ms = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(ms >= MIN_PROVIDER_TIMEOUT_MS && ms <= MAX_PROVIDER_TIMEOUT_MS))
    throw new NotConfigured(`${OAUTH_TIMEOUT_ENV} must be whole milliseconds from ${MIN_PROVIDER_TIMEOUT_MS} to ${MAX_PROVIDER_TIMEOUT_MS}`);
  return ms;
}

/**
 * `<P>_REDIRECT_URI`, else the configured public origin's `/auth/<p>/callback`. Never the
 * request's Host or X-Forwarded-Host: a client could otherwise send the code to a server of its
 * choosing (RFC 9700 §4.1).
 */
function redirectUri(provider: ProviderName, prefix: string, secrets: SecretSource): string {
  const explicit = secrets.env(`${prefix}_REDIRECT_URI`)?.trim();
  if (explicit) return absoluteHttpUrl(`${prefix}_REDIRECT_URI`, explicit);
  const origin = secrets.env(PUBLIC_URL_ENV)?.trim();
  if (!origin)
    throw new NotConfigured(
      `${provider} sign-in needs ${prefix}_REDIRECT_URI or ${PUBLIC_URL_ENV} (this server's public origin, e.g. https://app.example.com)`,
    );
  const base = absoluteHttpUrl(PUBLIC_URL_ENV, origin);
  return new URL(`/auth/${provider}/callback`, base).href;
}

function absoluteHttpUrl(variable: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new NotConfigured(`${variable} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new NotConfigured(`${variable} must be an http or https URL`);
  if (url.hash !== '' || url.username !== '' || url.password !== '') throw new NotConfigured(`${variable} must not carry a fragment or credentials`);
  // The flow cookie's Path is the callback's path: it must be a valid cookie attribute.
  if (/[;,]/.test(url.pathname)) throw new NotConfigured(`${variable} must not have ';' or ',' in its path`);
  return url.href;
}

/**
 * The issuer the ID token must name, given what the token claims (read before its checks; it
 * only chooses among the allowed values): Google's spelling the token uses when it is one of the
 * two; Microsoft's `https://login.microsoftonline.com/{tenantid}/v2.0` filled with the configured
 * tenant id, or, for a multi-tenant or domain-name tenant, with the token's `tid`.
 */
export function expectedIssuer(config: ProviderConfig, claims: Readonly<Record<string, unknown>>): string {
  if (config.provider === 'google') {
    return typeof claims.iss === 'string' && GOOGLE_ISSUERS.includes(claims.iss) ? claims.iss : GOOGLE_ISSUERS[0]!;
  }
  if (config.provider === 'microsoft') {
    const fixed = GUID_PATTERN.test(config.tenant) && !MULTI_TENANTS.has(config.tenant);
    const tid = fixed ? config.tenant : typeof claims.tid === 'string' && GUID_PATTERN.test(claims.tid) ? claims.tid : '{tenantid}';
    return `https://login.microsoftonline.com/${tid}/v2.0`;
  }
  return 'https://github.com';
}

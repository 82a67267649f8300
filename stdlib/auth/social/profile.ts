/**
 * The signed-in person as the callback returns them, `{provider, id, email, email_verified, name,
 * avatar_url}`, read from each provider: Google and Microsoft from the ID token and OIDC userinfo
 * (whose `sub` must be the token's), GitHub from `/user`, then `/user/emails` (primary and
 * verified) when the profile shows no e-mail.
 */
import type * as OAuth from 'oauth4webapi';
import { HTTP, type CallContext, type ValueObject } from '../../../plugins/sdk.js';
import { SocialFailure, callProvider, jsonBody, loadOauth, requestOptions } from './provider-http.js';
import type { ProviderConfig } from './providers.js';
import type { ExchangeResult } from './token-exchange.js';

/** GitHub's API refuses requests without a User-Agent. */
const GITHUB_USER_AGENT = 'rvm-social-login';

/** What the callback returns. */
export interface SocialProfile extends ValueObject {
  provider: string;
  /** The provider's stable subject: Google `sub`, GitHub numeric id as text, Microsoft `tid:oid`. */
  id: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  avatar_url: string | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The profile of the person the exchange signed in. */
export function readProfile(ctx: CallContext, config: ProviderConfig, tokens: ExchangeResult): Promise<SocialProfile> {
  return config.provider === 'github' ? githubProfile(ctx, config, tokens.accessToken) : oidcProfile(ctx, config, tokens);
}

/** Google and Microsoft: the ID token's claims, completed by userinfo. */
async function oidcProfile(ctx: CallContext, config: ProviderConfig, tokens: ExchangeResult): Promise<SocialProfile> {
  const oauth = await loadOauth();
  const claims = tokens.idClaims!;
  const sub = claims.sub as string;
  const as: OAuth.AuthorizationServer = { issuer: String(claims.iss), userinfo_endpoint: config.userinfoUrl };
  const client: OAuth.Client = { client_id: config.clientId };
  const response = await callProvider('the userinfo endpoint', () =>
    oauth.userInfoRequest(as, client, tokens.accessToken, requestOptions(oauth, ctx, config, config.userinfoUrl)),
  );
  if (response.status !== 200) throw new SocialFailure(HTTP.oauth_provider_unavailable, `the userinfo endpoint answered ${response.status}`);
  let info: OAuth.UserInfoResponse;
  try {
    info = await oauth.processUserInfoResponse(as, client, sub, response);
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') throw new SocialFailure(HTTP.oauth_provider_timeout);
    throw new SocialFailure(HTTP.oauth_provider_unavailable, 'the userinfo endpoint answered another subject or no profile');
  }
  const merged: Record<string, unknown> = { ...claims, ...info };
  if (config.provider === 'microsoft') {
    const tid = text(claims.tid);
    const oid = text(claims.oid);
    if (tid === null || oid === null) throw new SocialFailure(HTTP.oauth_invalid_id_token, 'the Microsoft ID token carries no tid and oid');
    // Microsoft calls `email` mutable and does not verify it for every account type; its photo needs the access token.
    return {
      provider: 'microsoft',
      id: `${tid}:${oid}`,
      email: text(merged.email),
      email_verified: merged.email_verified === true,
      name: text(merged.name),
      avatar_url: null,
    };
  }
  return {
    provider: 'google',
    id: sub,
    email: text(merged.email),
    email_verified: merged.email_verified === true,
    name: text(merged.name),
    avatar_url: text(merged.picture),
  };
}

/** One GitHub API call with the headers GitHub requires. */
async function githubGet(ctx: CallContext, config: ProviderConfig, url: string, accessToken: string, what: string): Promise<unknown> {
  const oauth = await loadOauth();
  const headers = new Headers({ accept: 'application/vnd.github+json', 'user-agent': GITHUB_USER_AGENT });
  const response = await callProvider(what, () =>
    oauth.protectedResourceRequest(accessToken, 'GET', new URL(url), headers, null, requestOptions(oauth, ctx, config, url)),
  );
  if (response.status !== 200) throw new SocialFailure(HTTP.oauth_provider_unavailable, `${what} answered ${response.status}`);
  return jsonBody(response, what);
}

/** GitHub: `/user`, and `/user/emails` when it shows no public address. */
async function githubProfile(ctx: CallContext, config: ProviderConfig, accessToken: string): Promise<SocialProfile> {
  const user = await githubGet(ctx, config, config.userinfoUrl, accessToken, 'GitHub /user');
  const fields = typeof user === 'object' && user !== null ? (user as Record<string, unknown>) : {};
  if (typeof fields.id !== 'number' || !Number.isSafeInteger(fields.id))
    throw new SocialFailure(HTTP.oauth_provider_unavailable, 'GitHub /user answered without a numeric id');
  let email = text(fields.email);
  // GitHub lets a user show only a verified address as their public e-mail.
  let verified = email !== null;
  if (email === null) {
    const list = await githubGet(ctx, config, config.emailsUrl, accessToken, 'GitHub /user/emails');
    const primary = Array.isArray(list) ? list.find((e) => typeof e === 'object' && e !== null && e.primary === true && e.verified === true) : undefined;
    email = primary === undefined ? null : text(primary.email);
    verified = email !== null;
  }
  return {
    provider: 'github',
    id: String(fields.id),
    email,
    email_verified: verified,
    name: text(fields.name) ?? text(fields.login),
    avatar_url: text(fields.avatar_url),
  };
}

/**
 * The callback's exchange with oauth4webapi: the authorization code and PKCE verifier for tokens
 * at the token endpoint (client secret in the body), then, for OpenID Connect, the ID token's
 * claims (`iss`, `aud == client_id`, `exp`, `nonce`) and its signature against the provider's JWKS.
 */
import type * as OAuth from 'oauth4webapi';
import { HTTP, type CallContext } from '../../../plugins/sdk.js';
import type { FlowState } from './flow-cookie.js';
import { SocialFailure, callProvider, isTransportError, jsonBody, loadOauth, requestOptions, transportFailure } from './provider-http.js';
import { expectedIssuer, type ProviderConfig } from './providers.js';

/** What the exchange yields: the access token (for the profile) and the checked ID-token claims. */
export interface ExchangeResult {
  accessToken: string;
  /** Google and Microsoft: the ID token's verified claims; GitHub: null. */
  idClaims: Record<string, unknown> | null;
}

/** JWKS kept between requests, one per JWKS URL, so a sign-in fetches keys only when they are stale (oauth4webapi refreshes after 5 minutes). */
export type JwksCaches = Map<string, OAuth.ExportedJWKSCache | Record<string, never>>;

/** The provider as oauth4webapi's plain-data authorization server. */
function authorizationServer(config: ProviderConfig, issuer: string): OAuth.AuthorizationServer {
  return {
    issuer,
    authorization_endpoint: config.authUrl,
    token_endpoint: config.tokenUrl,
    ...(config.oidc ? { userinfo_endpoint: config.userinfoUrl, jwks_uri: config.jwksUrl } : {}),
  };
}

/** The unverified payload of a JWT (only to choose the expected issuer; every claim is checked afterwards). */
function peekClaims(jwt: unknown): Record<string, unknown> {
  if (typeof jwt !== 'string') return {};
  try {
    const payload: unknown = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Exchanges `code` (already matched to the flow's state) for tokens and checks the ID token. */
export async function exchangeCode(ctx: CallContext, config: ProviderConfig, flow: FlowState, code: string, jwks: JwksCaches): Promise<ExchangeResult> {
  const oauth = await loadOauth();
  const client: OAuth.Client = { client_id: config.clientId };
  const clientAuth = oauth.ClientSecretPost(config.clientSecret);
  const provisional = authorizationServer(config, expectedIssuer(config, {}));
  // oauth4webapi takes callback parameters only from its own validation; state was checked in constant time before.
  const params = oauth.validateAuthResponse(provisional, client, new URLSearchParams({ code, state: flow.state }), flow.state);
  const response = await callProvider('the token endpoint', () =>
    oauth.authorizationCodeGrantRequest(provisional, client, clientAuth, params, config.redirectUri, flow.verifier, {
      ...requestOptions(oauth, ctx, config, config.tokenUrl),
      // GitHub answers form-encoded without it (oauth4webapi sends it too; said here as GitHub needs it).
      headers: { accept: 'application/json' },
    }),
  );
  if (response.status >= 500) throw new SocialFailure(HTTP.oauth_provider_unavailable, `the token endpoint answered ${response.status}`);
  const body = await jsonBody(response.clone(), 'the token endpoint');
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  // GitHub reports a refused code as HTTP 200 with an `error` field; others with 400.
  if (fields.error !== undefined || response.status !== 200) {
    const reason = typeof fields.error === 'string' && /^[a-z_]{1,64}$/.test(fields.error) ? `: ${fields.error}` : '';
    throw new SocialFailure(HTTP.oauth_exchange_failed, `the token endpoint refused the code${reason}`);
  }
  if (!config.oidc) {
    if (typeof fields.access_token !== 'string' || fields.access_token === '')
      throw new SocialFailure(HTTP.oauth_provider_unavailable, 'the token endpoint answered without an access token');
    return { accessToken: fields.access_token, idClaims: null };
  }
  const as = authorizationServer(config, expectedIssuer(config, peekClaims(fields.id_token)));
  let result: OAuth.TokenEndpointResponse;
  try {
    result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: flow.nonce ?? oauth.expectNoNonce, requireIdToken: true });
  } catch (error) {
    throw new SocialFailure(HTTP.oauth_invalid_id_token, `the ID token was refused: ${error instanceof Error ? error.message : 'malformed'}`);
  }
  await verifySignature(ctx, config, as, response, jwks);
  return { accessToken: result.access_token, idClaims: { ...oauth.getValidatedIdTokenClaims(result) } };
}

/** Checks the ID token's signature with the provider's keys (fetched, or from the cache). */
async function verifySignature(ctx: CallContext, config: ProviderConfig, as: OAuth.AuthorizationServer, response: Response, jwks: JwksCaches): Promise<void> {
  const oauth = await loadOauth();
  let cache = jwks.get(config.jwksUrl);
  if (cache === undefined) jwks.set(config.jwksUrl, (cache = {}));
  try {
    await oauth.validateApplicationLevelSignature(as, response, { ...requestOptions(oauth, ctx, config, config.jwksUrl), [oauth.jwksCache]: cache });
  } catch (error) {
    if (error instanceof SocialFailure) throw error;
    if (isTransportError(error)) throw transportFailure(error, 'the JWKS endpoint');
    if (error instanceof oauth.OperationProcessingError && (error.code === oauth.RESPONSE_IS_NOT_CONFORM || error.code === oauth.RESPONSE_IS_NOT_JSON)) {
      throw new SocialFailure(HTTP.oauth_provider_unavailable, 'the JWKS endpoint answered something that is not a key set');
    }
    throw new SocialFailure(HTTP.oauth_invalid_id_token, `the ID token signature was refused: ${error instanceof Error ? error.message : 'malformed'}`);
  }
}

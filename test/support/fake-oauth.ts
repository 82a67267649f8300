/**
 * A fake of Google, GitHub and Microsoft sign-in on one real node:http server on 127.0.0.1:0.
 * Authorize checks client_id, redirect_uri and the S256 challenge and redirects back with a code;
 * token checks the client secret, redirect_uri and the PKCE verifier (GitHub's failures are HTTP
 * 200 with `error`); ID tokens are RS256, signed with a key its JWKS publishes; userinfo, GitHub
 * `/user` and `/user/emails` need the access token (and, for GitHub, a User-Agent).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { cookieLine, get, pair, type Answer } from './http-client.js';
import { loadApp } from '../../tools/host.js';
import type { App } from '../../vm/runtime/app.js';
import { captureLogger, type Logger } from '../../vm/runtime/log.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';

export type FakeProvider = 'google' | 'github' | 'microsoft';

/** Client credentials the fake accepts, the same for the three providers. */
export const FAKE_CLIENT_ID = 'client-123';
export const FAKE_CLIENT_SECRET = 'secret-456';

/** The people the fake signs in. */
export const FAKE_PEOPLE = {
  google: { sub: '109876543210', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', picture: 'https://example.com/ada.png' },
  github: { id: 583231, login: 'octocat', name: 'The Octocat', avatar_url: 'https://example.com/octocat.png', email: 'octo@example.com' },
  microsoft: {
    tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
    oid: '00000000-0000-0000-66f3-3332eca7ea81',
    sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
    email: 'grace@example.com',
    name: 'Grace Hopper',
  },
} as const;

/** Knobs a test turns to make the fake misbehave like a real provider can. */
export interface FakeBehaviour {
  /** The `iss` of Google ID tokens (Google uses two spellings). */
  googleIssuer: string;
  /** When set, ID tokens carry this nonce instead of the one sent to authorize. */
  nonce: string | null;
  /** When set, ID tokens carry this audience instead of the client id. */
  audience: string | null;
  /** Authorize answers `error=<this>` instead of a code. */
  authorizeError: string | null;
  /** GitHub `/user` shows this public e-mail (null: only `/user/emails` has it). */
  githubPublicEmail: string | null;
  /** Milliseconds the token endpoint waits before answering. */
  tokenDelayMs: number;
  /** ID tokens are signed with a key the JWKS does not publish. */
  foreignKey: boolean;
  /** The `iss` of Microsoft ID tokens; default the tenant template filled with the token's tid. */
  microsoftIssuer: string | null;
  /** When set, Google signs in another account (this `sub`) with the same e-mail. */
  googleSub: string | null;
  /** Google's `email_verified` (ID token and userinfo): false for an address Google has not checked. */
  googleEmailVerified: boolean;
  /** When set, the answer to this action (`token`, `jwks`, `userinfo`, `user`) is padded to exactly `bytes` of JSON. */
  padded: { action: 'token' | 'jwks' | 'userinfo' | 'user'; bytes: number } | null;
}

const DEFAULT_BEHAVIOUR: FakeBehaviour = {
  googleIssuer: 'https://accounts.google.com',
  nonce: null,
  audience: null,
  authorizeError: null,
  githubPublicEmail: null,
  tokenDelayMs: 0,
  foreignKey: false,
  microsoftIssuer: null,
  googleSub: null,
  googleEmailVerified: true,
  padded: null,
};

/** One request the fake received (for assertions on what rvm sent). */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
  headers: IncomingMessage['headers'];
}

interface Grant {
  provider: FakeProvider;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
}

export interface FakeOAuth {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly behaviour: FakeBehaviour;
  readonly requests: FakeRequest[];
  /** The redirect_uri each provider expects (what the app is configured with). */
  expectRedirect(provider: FakeProvider, uri: string): void;
  /** Environment variables pointing an app's `provider` at this fake. */
  env(provider: FakeProvider): Record<string, string>;
  /** Puts every knob back to its default and forgets the requests. */
  reset(): void;
  close(): Promise<void>;
}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** `body` with a `padding` field making its JSON exactly `bytes` long. */
function padTo(body: Record<string, unknown>, bytes: number): Record<string, unknown> {
  const base = Buffer.byteLength(JSON.stringify({ ...body, padding: '' }));
  assert.ok(bytes >= base, `cannot pad ${base} bytes of JSON down to ${bytes}`);
  return { ...body, padding: 'x'.repeat(bytes - base) };
}

/** Answers to pad (FakeBehaviour.padded) and the length their JSON is made. */
const paddedTo = new WeakMap<ServerResponse, number>();

function json(res: ServerResponse, status: number, body: unknown): void {
  const bytes = paddedTo.get(res);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(bytes === undefined ? body : padTo(body as Record<string, unknown>, bytes)));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the fake. */
export async function startFakeOAuth(): Promise<FakeOAuth> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-1', alg: 'RS256', use: 'sig' };
  const behaviour: FakeBehaviour = { ...DEFAULT_BEHAVIOUR };
  const requests: FakeRequest[] = [];
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeProvider>();
  const redirects = new Map<FakeProvider, string>();
  let server: Server;

  const idToken = (provider: 'google' | 'microsoft', nonce: string | null): Promise<string> => {
    const person = FAKE_PEOPLE[provider];
    const claims: Record<string, unknown> =
      provider === 'google'
        ? { email: person.email, email_verified: behaviour.googleEmailVerified, name: person.name, picture: FAKE_PEOPLE.google.picture }
        : { tid: FAKE_PEOPLE.microsoft.tid, oid: FAKE_PEOPLE.microsoft.oid, email: person.email, name: person.name };
    const issuer =
      provider === 'google' ? behaviour.googleIssuer : (behaviour.microsoftIssuer ?? `https://login.microsoftonline.com/${FAKE_PEOPLE.microsoft.tid}/v2.0`);
    const nonceClaim = behaviour.nonce ?? nonce;
    if (nonceClaim !== null) claims.nonce = nonceClaim;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'fake-1', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(behaviour.audience ?? FAKE_CLIENT_ID)
      .setSubject(provider === 'google' ? (behaviour.googleSub ?? person.sub) : person.sub)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(behaviour.foreignKey ? foreign.privateKey : privateKey);
  };

  const authorize = (provider: FakeProvider, query: URLSearchParams, res: ServerResponse): void => {
    const redirectUri = query.get('redirect_uri') ?? '';
    if (query.get('client_id') !== FAKE_CLIENT_ID) return json(res, 400, { error: 'invalid_client' });
    if (redirectUri !== redirects.get(provider)) return json(res, 400, { error: 'redirect_uri_mismatch', got: redirectUri });
    if (query.get('response_type') !== 'code') return json(res, 400, { error: 'unsupported_response_type' });
    if (query.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(query.get('code_challenge') ?? ''))
      return json(res, 400, { error: 'invalid_request', detail: 'PKCE S256 required' });
    if (provider !== 'github' && !query.get('nonce')) return json(res, 400, { error: 'invalid_request', detail: 'nonce required' });
    const back = new URL(redirectUri);
    back.searchParams.set('state', query.get('state') ?? '');
    if (behaviour.authorizeError !== null) {
      back.searchParams.set('error', behaviour.authorizeError);
    } else {
      const code = b64url(randomBytes(24));
      grants.set(code, { provider, redirectUri, challenge: query.get('code_challenge')!, nonce: query.get('nonce') });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href });
    res.end();
  };

  const token = async (provider: FakeProvider, form: URLSearchParams, res: ServerResponse): Promise<void> => {
    if (behaviour.tokenDelayMs > 0) await new Promise((r) => setTimeout(r, behaviour.tokenDelayMs));
    // GitHub answers failures with 200 and an `error` field; the OIDC providers with 400.
    const fail = (error: string) => json(res, provider === 'github' ? 200 : 400, { error, error_description: `fake: ${error}` });
    if (form.get('client_id') !== FAKE_CLIENT_ID || form.get('client_secret') !== FAKE_CLIENT_SECRET)
      return fail(provider === 'github' ? 'incorrect_client_credentials' : 'invalid_client');
    if (provider !== 'github' && form.get('grant_type') !== 'authorization_code') return fail('unsupported_grant_type');
    const code = form.get('code') ?? '';
    const grant = grants.get(code);
    grants.delete(code);
    if (grant === undefined || grant.provider !== provider) return fail(provider === 'github' ? 'bad_verification_code' : 'invalid_grant');
    if (form.get('redirect_uri') !== grant.redirectUri) return fail(provider === 'github' ? 'redirect_uri_mismatch' : 'invalid_grant');
    const verifier = form.get('code_verifier') ?? '';
    if (b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge)
      return fail(provider === 'github' ? 'bad_verification_code' : 'invalid_grant');
    const accessToken = b64url(randomBytes(24));
    tokens.set(accessToken, provider);
    const body: Record<string, unknown> = { access_token: accessToken, token_type: provider === 'github' ? 'bearer' : 'Bearer', scope: 'openid email profile' };
    if (provider !== 'github') {
      body.expires_in = 3599;
      body.id_token = await idToken(provider, grant.nonce);
    }
    json(res, 200, body);
  };

  const bearer = (req: IncomingMessage, provider: FakeProvider): boolean => {
    const m = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
    return m !== null && tokens.get(m[1]!) === provider;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = req.method === 'POST' ? await readBody(req) : '';
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, form: new URLSearchParams(raw), headers: req.headers });
    const [, provider, action] = url.pathname.split('/') as [string, FakeProvider, string];
    if (!['google', 'github', 'microsoft'].includes(provider)) return json(res, 404, { error: 'not_found' });
    if (behaviour.padded?.action === action) paddedTo.set(res, behaviour.padded.bytes);
    switch (action) {
      case 'authorize':
        return authorize(provider, url.searchParams, res);
      case 'token':
        return token(provider, new URLSearchParams(raw), res);
      case 'jwks':
        return json(res, 200, { keys: [jwk] });
      case 'userinfo': {
        if (!bearer(req, provider)) return json(res, 401, { error: 'invalid_token' });
        const p = provider === 'google' ? FAKE_PEOPLE.google : FAKE_PEOPLE.microsoft;
        return json(
          res,
          200,
          provider === 'google'
            ? { ...p, sub: behaviour.googleSub ?? p.sub, email_verified: behaviour.googleEmailVerified }
            : { sub: p.sub, email: p.email, name: p.name, picture: 'https://graph.microsoft.com/v1.0/me/photo/$value' },
        );
      }
      case 'user':
        if (!req.headers['user-agent'])
          return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
        if (!bearer(req, 'github')) return json(res, 401, { message: 'Bad credentials' });
        return json(res, 200, { ...FAKE_PEOPLE.github, email: behaviour.githubPublicEmail });
      case 'emails':
        if (!req.headers['user-agent']) return json(res, 403, { message: 'User-Agent required' });
        if (!bearer(req, 'github')) return json(res, 401, { message: 'Bad credentials' });
        return json(res, 200, [
          { email: 'old@example.com', primary: false, verified: true, visibility: null },
          { email: 'unverified@example.com', primary: true, verified: false, visibility: null },
          { email: FAKE_PEOPLE.github.email, primary: true, verified: true, visibility: 'private' },
        ]);
      default:
        return json(res, 404, { error: 'not_found' });
    }
  };

  server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { error: 'fake_failed', detail: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    behaviour,
    requests,
    expectRedirect: (provider, uri) => void redirects.set(provider, uri),
    env(provider) {
      const P = provider.toUpperCase();
      const base = `${url}/${provider}`;
      const common = {
        [`${P}_CLIENT_ID`]: FAKE_CLIENT_ID,
        [`${P}_CLIENT_SECRET`]: FAKE_CLIENT_SECRET,
        [`${P}_AUTH_URL`]: `${base}/authorize`,
        [`${P}_TOKEN_URL`]: `${base}/token`,
      };
      if (provider === 'github') return { ...common, GITHUB_USER_URL: `${base}/user`, GITHUB_EMAILS_URL: `${base}/emails` };
      return { ...common, [`${P}_USERINFO_URL`]: `${base}/userinfo`, [`${P}_JWKS_URL`]: `${base}/jwks` };
    },
    reset() {
      Object.assign(behaviour, DEFAULT_BEHAVIOUR);
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser's first two legs: the app's login redirect (with its flow cookie), and the fake's redirect back with code and state. */
export async function startFlow(appUrl: string, provider: FakeProvider): Promise<{ login: Answer; cookie: string; callbackUrl: string }> {
  const login = await get(`${appUrl}/auth/${provider}`);
  assert.equal(login.status, 302, login.body);
  const cookie = pair(cookieLine(login, `rvm_oauth_${provider}`));
  const atProvider = await get(login.headers.location!);
  assert.equal(atProvider.status, 302, atProvider.body);
  return { login, cookie, callbackUrl: atProvider.headers.location! };
}

/** A whole sign-in as a browser makes it; the callback's answer with the legs before it. */
export async function signIn(appUrl: string, provider: FakeProvider): Promise<{ callback: Answer; cookie: string; callbackUrl: string; login: Answer }> {
  const flow = await startFlow(appUrl, provider);
  const callback = await get(flow.callbackUrl, { cookie: flow.cookie });
  return { ...flow, callback };
}

/** Routes `GET /auth/<p>` (the redirect) and `GET /auth/<p>/callback` (its answer) for each provider. */
export function socialRoutes(providers: readonly FakeProvider[]): string {
  return providers
    .map(
      (p) => `
route GET /auth/${p} {
  response.redirect(auth_${p}_login())
}

route GET /auth/${p}/callback {
  response.ok(auth_${p}_callback())
}
`,
    )
    .join('\n');
}

/**
 * Serves the app in `dir` against `fake`: every provider configured in `env` (read per request),
 * `PUBLIC_URL` set once the server listens, and each provider told to expect the callback there.
 */
export async function serveAgainstFake(
  fake: FakeOAuth,
  dir: string,
  env: Record<string, string>,
  logger: Logger = captureLogger(),
): Promise<{ app: App; server: RunningServer }> {
  Object.assign(env, fake.env('google'), fake.env('github'), fake.env('microsoft'));
  const app = await loadApp(dir, { cache: false, logger, settings: { env } });
  const server = await startServer(app, { port: 0, host: '127.0.0.1' });
  env.PUBLIC_URL = server.url;
  for (const p of ['google', 'github', 'microsoft'] as const) fake.expectRedirect(p, `${server.url}/auth/${p}/callback`);
  return { app, server };
}

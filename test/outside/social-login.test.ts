/**
 * Outside check: an independent client drives the Google and GitHub sign-ins of a
 * running `rvm run` against an independently written fake provider. Both are Python (stdlib
 * only): the fake checks client id and secret, redirect_uri, PKCE S256 (sha256 of the verifier)
 * and, for Google, signs an RS256 ID token with a key made and used by the `openssl` CLI and
 * published as a JWKS; the client is urllib with a cookie jar, following redirects as a browser
 * does. Nothing of rvm's test support (test/support/fake-oauth.ts) is used.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRvm, type RunningCli } from '../integration/rvm-run.js';
import { freePort } from '../support/free-port.js';
import { socialRoutes } from '../support/fake-oauth.js';

const PYTHON = '/usr/bin/python3';
/** How long the Python fake may take to make its RSA key and print its port. */
const FAKE_START_TIMEOUT_MS = 20_000;

const ROUTES = socialRoutes(['google', 'github']);

/** The fake provider (`serve APP_ORIGIN`) and the client (`client APP_ORIGIN PROVIDER`), in one script. */
// biome-ignore lint/complexity/noUselessStringRaw: Python source; a backslash added to it must reach Python as written
const SCRIPT = String.raw`
import base64, hashlib, http.cookiejar, json, os, secrets, subprocess, sys, time, urllib.error, urllib.parse, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLIENT_ID = 'outside-client'
CLIENT_SECRET = 'outside-secret'

def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()

def serve(app_origin):
    # Beside this script, in the app folder the test removes: a folder of its own would outlive the run.
    key = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'key.pem')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key], check=True, capture_output=True)
    modulus = subprocess.run(['openssl', 'rsa', '-in', key, '-noout', '-modulus'], check=True, capture_output=True, text=True).stdout.strip().split('=', 1)[1]
    jwk = {'kty': 'RSA', 'kid': 'outside-1', 'alg': 'RS256', 'use': 'sig', 'n': b64u(bytes.fromhex(modulus)), 'e': 'AQAB'}

    def sign(claims):
        signing_input = b64u(json.dumps({'alg': 'RS256', 'kid': 'outside-1', 'typ': 'JWT'}).encode()) + '.' + b64u(json.dumps(claims).encode())
        signature = subprocess.run(['openssl', 'dgst', '-sha256', '-sign', key], input=signing_input.encode(), check=True, capture_output=True).stdout
        return signing_input + '.' + b64u(signature)

    codes = {}
    tokens = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            provider, _, action = url.path.strip('/').partition('/')
            if action == 'authorize':
                expected = app_origin + '/auth/' + provider + '/callback'
                problems = [name for name, ok in [
                    ('client_id', query.get('client_id') == CLIENT_ID),
                    ('redirect_uri', query.get('redirect_uri') == expected),
                    ('response_type', query.get('response_type') == 'code'),
                    ('S256', query.get('code_challenge_method') == 'S256' and len(query.get('code_challenge', '')) == 43),
                    ('nonce', provider != 'google' or bool(query.get('nonce'))),
                    ('state', bool(query.get('state'))),
                ] if not ok]
                if problems:
                    return self.answer(400, {'error': 'invalid_request', 'problems': problems})
                code = secrets.token_urlsafe(24)
                codes[code] = {'provider': provider, 'challenge': query['code_challenge'], 'nonce': query.get('nonce'), 'redirect_uri': expected}
                self.send_response(302)
                self.send_header('Location', expected + '?' + urllib.parse.urlencode({'code': code, 'state': query['state']}))
                self.send_header('Content-Length', '0')
                self.end_headers()
                return
            if action == 'jwks':
                return self.answer(200, {'keys': [jwk]})
            authorization = self.headers.get('Authorization', '')
            if tokens.get(authorization[7:]) is None or authorization[:7].lower() != 'bearer ':
                return self.answer(401, {'error': 'invalid_token'})
            if action == 'userinfo':
                return self.answer(200, {'sub': 'outside-sub-1', 'email': 'lin@example.org', 'email_verified': True, 'name': 'Lin Outside', 'picture': 'https://example.org/lin.png'})
            if not self.headers.get('User-Agent'):
                return self.answer(403, {'message': 'User-Agent required'})
            if action == 'user':
                return self.answer(200, {'id': 4242, 'login': 'outsider', 'name': None, 'email': None, 'avatar_url': 'https://example.org/o.png'})
            if action == 'emails':
                return self.answer(200, [{'email': 'x@example.org', 'primary': False, 'verified': True}, {'email': 'outsider@example.org', 'primary': True, 'verified': True}])
            return self.answer(404, {'error': 'not_found'})

        def do_POST(self):
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get('Content-Length', '0'))).decode()))
            provider = self.path.strip('/').split('/')[0]
            github = provider == 'github'
            def fail(error):
                # GitHub answers token errors with 200 and an error field.
                return self.answer(200 if github else 400, {'error': error})
            if form.get('client_id') != CLIENT_ID or form.get('client_secret') != CLIENT_SECRET:
                return fail('invalid_client')
            grant = codes.pop(form.get('code', ''), None)
            if grant is None or grant['provider'] != provider or form.get('redirect_uri') != grant['redirect_uri']:
                return fail('invalid_grant')
            if b64u(hashlib.sha256(form.get('code_verifier', '').encode()).digest()) != grant['challenge']:
                return fail('invalid_grant')
            access = secrets.token_urlsafe(24)
            tokens[access] = provider
            body = {'access_token': access, 'token_type': 'bearer' if github else 'Bearer'}
            if not github:
                now = int(time.time())
                body['id_token'] = sign({'iss': 'https://accounts.google.com', 'aud': CLIENT_ID, 'sub': 'outside-sub-1', 'iat': now, 'exp': now + 300,
                                         'nonce': grant['nonce'], 'email': 'lin@example.org', 'email_verified': True, 'name': 'Lin Outside'})
            return self.answer(200, body)

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    print('PORT', server.server_address[1], flush=True)
    server.serve_forever()

def client(app_origin, provider):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    def fetch(url):
        try:
            with opener.open(url, timeout=20) as r:
                return r.status, r.url, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, e.url, json.loads(e.read())
    status, final_url, body = fetch(app_origin + '/auth/' + provider)
    left = [c.name for c in jar]
    replay_status, _, replay = fetch(final_url)
    print(json.dumps({'status': status, 'path': urllib.parse.urlsplit(final_url).path, 'body': body, 'cookies_left': left, 'replay_status': replay_status, 'replay_code': replay.get('code')}))

if sys.argv[1] == 'serve':
    serve(sys.argv[2])
else:
    client(sys.argv[2], sys.argv[3])
`;

/** Starts the Python fake; resolves with its base URL. */
function startFake(script: string, appOrigin: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(PYTHON, [script, 'serve', appOrigin], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the Python fake did not start:\n${output}`));
    }, FAKE_START_TIMEOUT_MS);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /PORT (\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${m[1]}` });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the Python fake exited with ${code}:\n${output}`));
    });
  });
}

describe('social login driven from outside (Python client and fake provider)', () => {
  let dir: string;
  let script: string;
  let fake: { child: ChildProcess; url: string };
  let rvm: RunningCli;
  let origin: string;

  before(async () => {
    const openssl = spawnSync('openssl', ['version'], { encoding: 'utf8' });
    assert.equal(openssl.status, 0, 'the openssl CLI is needed to sign the fake ID token');
    dir = mkdtempSync(join(tmpdir(), 'rvm-social-outside-'));
    writeFileSync(join(dir, 'social.rvm'), ROUTES);
    script = join(dir, 'outside.py');
    writeFileSync(script, SCRIPT);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    fake = await startFake(script, origin);
    const provider = (p: string) => ({
      [`${p}_CLIENT_ID`]: 'outside-client',
      [`${p}_CLIENT_SECRET`]: 'outside-secret',
      [`${p}_AUTH_URL`]: `${fake.url}/${p.toLowerCase()}/authorize`,
      [`${p}_TOKEN_URL`]: `${fake.url}/${p.toLowerCase()}/token`,
    });
    rvm = await startRvm(
      dir,
      {
        ...process.env,
        PUBLIC_URL: origin,
        APP_SECRET: 'outside-app-secret-'.padEnd(43, 'x'),
        ...provider('GOOGLE'),
        GOOGLE_USERINFO_URL: `${fake.url}/google/userinfo`,
        GOOGLE_JWKS_URL: `${fake.url}/google/jwks`,
        ...provider('GITHUB'),
        GITHUB_USER_URL: `${fake.url}/github/user`,
        GITHUB_EMAILS_URL: `${fake.url}/github/emails`,
      },
      port,
    );
  });

  after(() => {
    rvm?.child.kill();
    fake?.child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the Python client for one provider; its JSON report. */
  function drive(provider: string): Record<string, unknown> {
    const r = spawnSync(PYTHON, [script, 'client', origin, provider], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  test('Google: redirects followed with a cookie jar end at the callback with the verified profile; the replay is refused', () => {
    const report = drive('google');
    assert.deepEqual(report, {
      status: 200,
      path: '/auth/google/callback',
      body: {
        provider: 'google',
        id: 'outside-sub-1',
        email: 'lin@example.org',
        email_verified: true,
        name: 'Lin Outside',
        avatar_url: 'https://example.org/lin.png',
      },
      cookies_left: [],
      replay_status: 400,
      replay_code: 'oauth_cookie_missing',
    });
  });

  test('GitHub: the e-mail from /user/emails (primary, verified), the login as name; the replay is refused', () => {
    const report = drive('github');
    assert.deepEqual(report, {
      status: 200,
      path: '/auth/github/callback',
      body: { provider: 'github', id: '4242', email: 'outsider@example.org', email_verified: true, name: 'outsider', avatar_url: 'https://example.org/o.png' },
      cookies_left: [],
      replay_status: 400,
      replay_code: 'oauth_cookie_missing',
    });
  });
});

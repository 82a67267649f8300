/**
 * The one cookie a social sign-in keeps between `auth_<p>_login()` and `auth_<p>_callback()`:
 * state, PKCE verifier and (OpenID Connect) nonce, with the provider and an expiry, signed with
 * HMAC-SHA256 under the app secret so a client can neither forge nor alter it.
 */
import { constantTimeEqual, signText } from '../../../plugins/sdk.js';
import type { ProviderName } from './providers.js';

/** How long a sign-in may take at the provider: long enough for a password and a second factor, short enough that a stolen cookie soon stops mattering. */
export const FLOW_TTL_MS = 10 * 60 * 1000;

/** Longest cookie text opened: what rvm writes is about 300 characters; anything longer is refused before any HMAC is computed. */
export const MAX_FLOW_COOKIE_LENGTH = 1024;

/** Domain separation: this HMAC under the app secret signs nothing else (CSRF tokens use their own message). */
const MAC_CONTEXT = 'rvm.oauth-flow.v1.';

/** What travels in the cookie. */
export interface FlowState {
  provider: ProviderName;
  state: string;
  verifier: string;
  /** Google and Microsoft only. */
  nonce: string | null;
  /** Milliseconds since the epoch after which the cookie is refused. */
  expiresAt: number;
}

/** Why a cookie was refused: `expired` is treated like a missing one, `invalid` as tampering. */
export type OpenFailure = 'expired' | 'invalid';

/** The cookie name of a provider's flow: one per provider, so two sign-ins in parallel do not clash. */
export function flowCookieName(provider: ProviderName): string {
  return `rvm_oauth_${provider}`;
}

function mac(secret: string, payload: string): string {
  return signText(secret, MAC_CONTEXT + payload);
}

/** The cookie value for `flow`: base64url(JSON) `.` base64url(HMAC). */
export function sealFlow(secret: string, flow: FlowState): string {
  const payload = Buffer.from(JSON.stringify({ p: flow.provider, s: flow.state, v: flow.verifier, n: flow.nonce, e: flow.expiresAt })).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

/** The flow a cookie holds for `provider`, or why it cannot be used. Never throws. */
export function openFlow(secret: string, provider: ProviderName, text: string, now: number): FlowState | OpenFailure {
  if (text.length > MAX_FLOW_COOKIE_LENGTH) return 'invalid';
  const dot = text.indexOf('.');
  if (dot <= 0) return 'invalid';
  const payload = text.slice(0, dot);
  if (!constantTimeEqual(text.slice(dot + 1), mac(secret, payload))) return 'invalid';
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (typeof data !== 'object' || data === null) return 'invalid';
  const { p, s, v, n, e } = data as Record<string, unknown>;
  if (p !== provider || typeof s !== 'string' || typeof v !== 'string' || (n !== null && typeof n !== 'string') || typeof e !== 'number') return 'invalid';
  if (now > e) return 'expired';
  return { provider, state: s, verifier: v, nonce: n, expiresAt: e };
}

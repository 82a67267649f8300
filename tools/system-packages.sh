#!/usr/bin/env bash
# The Debian packages the test suites need, checked before every `npm test`. As root with apt-get
# (CI, a fresh machine), it installs the missing ones (one apt-get update, only when something is
# missing); otherwise it stops at once with the apt-get line to run. A suite never skips for want
# of one:
# - chromium: the browser tests of the API reference drive it through playwright-core (which
#   downloads no browser of its own);
# - python3-argon2: the outside check of test/outside/argon2-cffi verifies rvm's Argon2 hashes with
#   Python's argon2-cffi, in Debian's /usr/bin/python3;
# - postgresql: the records suites start a throwaway server from /usr/lib/postgresql/*/bin on
#   loopback (test/support/postgres.ts);
# - openssl: the outside check of test/outside/social-login makes and uses the Python fake
#   provider's RSA key with the openssl CLI (Python's standard library cannot sign RS256);
# - redis-server: the shared-store suites start a throwaway Redis on loopback (test/support/redis-server.ts).
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
/usr/bin/python3 -c 'import argon2' 2>/dev/null || missing+=(python3-argon2)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v openssl >/dev/null || missing+=(openssl)
command -v redis-server >/dev/null || missing+=(redis-server)

if [ "${#missing[@]}" -gt 0 ]; then
  install=(apt-get install -y --no-install-recommends "${missing[@]}")
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "The tests need Debian packages that are missing: ${missing[*]}. Install them, then run npm test again:" >&2
    echo "  sudo ${install[*]}" >&2
    exit 1
  fi
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  "${install[@]}" -qq >/dev/null
fi

echo "browser: $(/usr/bin/chromium --version 2>/dev/null)"
echo "argon2-cffi: $(/usr/bin/python3 -c 'import argon2; print(argon2.__version__)')"
echo "postgresql: $(compgen -G '/usr/lib/postgresql/*/bin' | head -n 1)"
echo "redis: $(redis-server --version)"

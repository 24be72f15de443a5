#!/usr/bin/env bash
# Installs the Debian packages the test suite drives: chromium (the browser tests, through
# playwright-core), libxml2-utils (xmllint validates payment files) and poppler-utils (pdftoppm
# and pdftotext read invoice PDFs). Needs root and apt-get; installs only what is missing.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v xmllint >/dev/null || missing+=(libxml2-utils)
{ command -v pdftoppm >/dev/null && command -v pdftotext >/dev/null; } || missing+=(poppler-utils)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-test-deps: chromium, xmllint, pdftoppm and pdftotext are present"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-test-deps: missing ${missing[*]}; run this script as root on Debian or Ubuntu" >&2
  exit 1
fi
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-test-deps: installed ${missing[*]}"

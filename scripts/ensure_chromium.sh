#!/bin/sh
# The page tests drive Debian's chromium (Playwright's own browser download does not work offline).
# Install it when it is missing and this machine can (root with apt-get); otherwise say how.
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the page tests..." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
else
    echo "the page tests need chromium: sudo apt-get install chromium chromium-driver" >&2
fi

#!/usr/bin/env bash
# Install Debian's chromium and chromium-driver for the MiniWoB++ environment
# (guirl.envs.miniwob), unless both are already there. Idempotent; needs root
# (CI runs as root) or sudo. Usage: scripts/install_browser.sh
set -euo pipefail

have() { [ -x "/usr/bin/$1" ] || command -v "$1" >/dev/null 2>&1; }

if have chromium && have chromedriver; then
  echo "chromium and chromedriver are already installed:"
else
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: apt-get not found; install chromium and its chromedriver yourself and set" >&2
    echo "MINIWOB_CHROME_BINARY and MINIWOB_CHROMEDRIVER to their paths" >&2
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "error: run as root (or install sudo) to install chromium with apt-get" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends chromium chromium-driver
  echo "installed:"
fi
chromium --version 2>/dev/null || /usr/bin/chromium --version
chromedriver --version 2>/dev/null || /usr/bin/chromedriver --version

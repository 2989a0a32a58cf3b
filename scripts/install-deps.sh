#!/bin/sh
# Installs the Debian packages paddiser needs, only those missing.
# Extra packages can be asked for as arguments (integration targets do this).
set -eu
pkgs="build-essential pkg-config libyaml-dev libjansson-dev libcmocka-dev libnuma-dev libxgboost-dev $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

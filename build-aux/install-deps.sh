#!/bin/sh
# install-deps.sh — install the Debian packages flight_profiler needs to
# build, run its demo and run its tests.  Skips apt when all are present.
set -e
pkgs="build-essential autoconf automake libtool pkg-config \
libncurses-dev libunwind-dev libdw-dev libelf-dev libpcre2-dev libjansson-dev \
python3 python3-dev python3-pytest tmux clang"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null

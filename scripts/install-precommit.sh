#!/usr/bin/env bash
# Installs the pre-commit framework (https://pre-commit.com) when it is missing.
# Idempotent: does nothing when `pre-commit` is already on PATH.
# Debian/Ubuntu (as root or with sudo): the distribution's package;
# elsewhere: pipx or pip --user.
set -euo pipefail

if command -v pre-commit >/dev/null 2>&1; then
	echo "pre-commit already installed: $(pre-commit --version)"
	exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
	sudo="sudo -n"
fi

if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
	# Wait for another apt/dpkg run instead of failing on its lock.
	lock=(-o DPkg::Lock::Timeout=600)
	$sudo apt-get "${lock[@]}" update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends pre-commit
elif command -v pipx >/dev/null 2>&1; then
	pipx install pre-commit
elif command -v python3 >/dev/null 2>&1; then
	python3 -m pip install --user pre-commit
	export PATH="$HOME/.local/bin:$PATH"
else
	echo "install-precommit: no apt-get, pipx or python3 to install pre-commit with" >&2
	exit 1
fi

command -v pre-commit >/dev/null 2>&1 || { echo "install-precommit: pre-commit is still not on PATH" >&2; exit 1; }
echo "installed $(pre-commit --version)"

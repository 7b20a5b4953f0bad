# Shared by the scripts in this folder: finds or installs uv, the one tool they need.
# Source it, then call ensure_uv: afterwards `uv` is on PATH (exported, so the
# tests and every child process find the same one) and the UV array holds it,
# e.g. "${UV[@]}" sync.
#
# On a fresh machine uv is installed with the machine's own pip into a folder of
# its own outside the repository (pip's --target, which also works where the
# system Python is "externally managed", PEP 668), then reused on later runs.

KARNI_UV_VERSION=0.13.9  # the uv that wrote uv.lock; bump both together

ensure_uv() {
    if command -v uv >/dev/null 2>&1; then
        UV=(uv)
        return
    fi
    local python cache tools
    python=$(command -v python3 || command -v python) || {
        echo "scripts: neither uv nor python3 is on PATH; install Python 3.11 or newer" >&2
        exit 1
    }
    cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}
    tools=${KARNI_TOOLS_DIR:-$cache/karni-dev/uv-$KARNI_UV_VERSION}
    if [ ! -x "$tools/bin/uv" ]; then
        echo "scripts: uv not found; installing uv $KARNI_UV_VERSION with pip into $tools" >&2
        rm -rf "$tools.partial"
        if ! "$python" -m pip install --quiet --disable-pip-version-check --no-input \
            --root-user-action=ignore --target "$tools.partial" "uv==$KARNI_UV_VERSION"; then
            rm -rf "$tools.partial"
            echo "scripts: could not install uv with $python -m pip; install uv" \
                "(https://docs.astral.sh/uv/) and run again" >&2
            exit 1
        fi
        rm -rf "$tools"
        mv "$tools.partial" "$tools"
    fi
    export PATH="$tools/bin:$PATH"
    UV=(uv)
}

# Trust the machine's certificate store (a company proxy's CA lives there), as
# pip does, rather than only the certificates bundled in uv.
export UV_SYSTEM_CERTS="${UV_SYSTEM_CERTS:-1}"

# Node.js loads the generated OpenCode plugin and Pi extension in the hook
# tests. A fresh Debian or Ubuntu machine (CI) gets Debian's nodejs when the
# script runs as root; elsewhere, without node, those tests are skipped, except
# in CI, where a missing node is an error.
ensure_node() {
    if command -v node >/dev/null 2>&1; then
        return
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "scripts: node not found; installing Debian's nodejs with apt-get" >&2
        if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null; then
            return
        fi
    fi
    if [ -n "${CI:-}" ]; then
        echo "scripts: node (Node.js) is not installed and could not be; install it and run again" >&2
        exit 1
    fi
    echo "scripts: node (Node.js) is not installed: the tests of the generated hook modules are skipped" >&2
}

# Chromium renders the historian's timeline page in its browser test
# (packages/karni-historian/tests/test_timeline_browser.py). A fresh Debian
# machine (CI) gets Debian's chromium when the script runs as root (or sudo
# asks for no password); elsewhere, without it (or Google Chrome), that test
# is skipped, except in CI, where a missing browser is an error.
ensure_chromium() {
    local name
    for name in /usr/bin/chromium chromium chromium-browser google-chrome google-chrome-stable; do
        if command -v "$name" >/dev/null 2>&1; then
            return
        fi
    done
    local as_root=()
    if [ "$(id -u)" != 0 ]; then
        as_root=(sudo -n)  # only where sudo asks for no password
        sudo -n true >/dev/null 2>&1 || as_root=(false)
    fi
    if command -v apt-get >/dev/null 2>&1 && [ "${as_root[0]:-}" != false ]; then
        echo "scripts: /usr/bin/chromium not found; installing Debian's chromium with apt-get" >&2
        if "${as_root[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" \
            apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
            return
        fi
    fi
    if [ -n "${CI:-}" ]; then
        echo "scripts: chromium is not installed and could not be; install it and run again" >&2
        exit 1
    fi
    echo "scripts: chromium is not installed: the timeline page's browser test is skipped" >&2
}

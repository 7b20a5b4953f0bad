# Shared by the scripts in this folder: finds or installs uv, the one tool they need.
# Source it; it sets the UV array, e.g. "${UV[@]}" sync.

ensure_uv() {
    if command -v uv >/dev/null 2>&1; then
        UV=(uv)
        return
    fi
    local python
    python=$(command -v python3 || command -v python)
    if ! "$python" -m uv --version >/dev/null 2>&1; then
        echo "scripts: uv not found; installing it with pip" >&2
        "$python" -m pip install --quiet --disable-pip-version-check 'uv>=0.9,<1'
    fi
    UV=("$python" -m uv)
}

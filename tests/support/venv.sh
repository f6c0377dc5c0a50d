# Sourced by the Python-side test scripts: `ensure_venv NAME REQUIREMENTS` makes the
# virtualenv target/NAME (from the repository root) and installs REQUIREMENTS into it
# when they changed since the last install; it sets `venv` to its path.
ensure_venv() {
    venv="$PWD/target/$1"
    local requirements="$2" stamp="$PWD/target/$1/.requirements"
    if [[ ! -x "$venv/bin/python" ]]; then
        python3 -m venv "$venv"
    fi
    if ! cmp -s "$requirements" "$stamp"; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
        cp "$requirements" "$stamp"
    fi
}

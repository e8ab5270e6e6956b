#!/usr/bin/env sh
# Regenerate the image's locked dependencies (pinned versions with sha256 hashes, from PyPI only):
#   deploy/requirements.lock        the runtime dependencies of pyproject.toml with its extra `all` (every
#                                   bot and the web table: the image runs them all)
#   deploy/build-requirements.lock  what `pip install .` needs in the build stage (setuptools)
# Run from the repository root with Python 3.11 (the image's Python): sh deploy/lock.sh. The lock holds for
# every Python 3.11.x or 3.12.x the image may be built on (deploy/requirements-any-python.in).
# Existing pins are kept unless pyproject.toml asks otherwise; `sh deploy/lock.sh --upgrade` moves them all.
set -eu
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/pip" install --quiet pip-tools
compile() {
    # The machine's own pip configuration (extra indexes, local wheels) must not leak into the lock.
    env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_CONSTRAINT PIP_CONFIG_FILE=/dev/null \
        "$tools/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
        --index-url https://pypi.org/simple --no-emit-index-url "$@"
}
# requirements-any-python.in: what some Python the image may be built on needs beyond this one's.
compile --output-file deploy/requirements.lock pyproject.toml deploy/requirements-any-python.in --extra all "$@"
compile --output-file deploy/build-requirements.lock deploy/build-requirements.in "$@"

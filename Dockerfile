# The hive's image: `hive serve` as a non-root user, behind tini so SIGTERM reaches it and
# orphaned agent processes are reaped. Build: docker build -t hive .
# Run: docker run -e HIVE_DATABASE_URL=... -e HIVE_API_TOKEN=... -p 8080:8080 hive

# The base, pinned by digest (python:3.11-slim-bookworm, the multi-arch index): a tag moves
# under a rebuild, a digest does not. Bump both stages together.

# ---- build: install the project and its dependencies into a virtualenv ----------------
FROM python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91 AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
RUN python -m venv /opt/hive
# The dependencies first, from the lock file (exact versions, checked by hash), in their own
# layer: a change to the source alone rebuilds only the layer below. The lock holds the
# production set only: no embedded PostgreSQL (hive[embedded]), so HIVE_DATABASE_URL is
# required. Remake it with the command in its header after a change to pyproject.toml.
# Wheels only: an sdist would be built with tools fetched unchecked.
COPY requirements.lock requirements-build.lock ./
RUN /opt/hive/bin/pip install --no-cache-dir --require-hashes --only-binary :all: -r requirements.lock \
    && /opt/hive/bin/pip install --no-cache-dir --require-hashes --only-binary :all: -r requirements-build.lock
COPY pyproject.toml README.md ./
COPY supervisors ./supervisors
COPY hive ./hive
# The build tools came with their hashes (requirements-build.lock), so no build isolation
# fetches others; then they go, and pip with them: the image installs nothing at run time.
RUN /opt/hive/bin/pip install --no-cache-dir --no-deps --no-build-isolation . \
    && /opt/hive/bin/pip uninstall --yes setuptools wheel pip

# ---- runtime: the virtualenv on a slim Python, nothing else but tini --------------------
FROM python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91

# tini as PID 1: forwards SIGTERM to hive (not to its group: bees run in their own process
# groups and the drain decides when they stop) and reaps orphans a killed agent leaves.
# The base's own pip, setuptools and wheel go too: nothing here installs packages.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
    && rm -rf /var/lib/apt/lists/* \
    && python -m pip uninstall --yes pip setuptools wheel \
    && groupadd --system --gid 10001 hive \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /var/lib/hive hive

COPY --from=build /opt/hive /opt/hive

# The image listens on every interface; `hive serve` refuses to start that way without
# HIVE_API_TOKEN, so a token is part of every deployment.
ENV PATH=/opt/hive/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HIVE_HTTP_ADDR=0.0.0.0:8080 \
    HIVE_WORKDIR=/var/lib/hive/work \
    HIVE_PGDATA=/var/lib/hive/pg \
    HIVE_LOG_FORMAT=json

# numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd
USER 10001:10001
WORKDIR /var/lib/hive
EXPOSE 8080

# No curl in the image: the standard library asks /healthz on the port HIVE_HTTP_ADDR names.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; port = os.environ.get('HIVE_HTTP_ADDR', '127.0.0.1:8080').rsplit(':', 1)[1]; urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4)"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "hive"]
CMD ["serve"]

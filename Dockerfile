# kandev-web as a container: the wheel inside, run as a user of its own.
# Built by deploy/compose.yaml at two targets: "web" (the default, the last
# stage) for the web processes, "executor" for the executor host.

# The wheel is built the way a release is: the sdist first, then the wheel
# from the sdist (python -m build), so what the sdist lacks the image lacks too
# (tests/test_package.py builds it the same way).
FROM python:3.13-slim AS wheel
WORKDIR /src
COPY . .
RUN pip install --no-cache-dir -c requirements/lock.txt build \
    && python -m build --outdir /dist . \
    && rm /dist/*.tar.gz

# What both images share: the wheel (console scripts in /usr/local/bin), git
# for each task's worktree, Node.js for agents started with npx (the Claude ACP
# bridge), and the kandev user.
FROM python:3.13-slim AS base
RUN apt-get update \
    && apt-get install -y --no-install-recommends git nodejs npm \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 kandev
COPY --from=wheel /dist/ /tmp/dist/
# The versions CI tests with (requirements/lock.txt, made by bash scripts/lock), not the newest of the day.
COPY requirements/lock.txt /tmp/lock.txt
RUN pip install --no-cache-dir -c /tmp/lock.txt /tmp/dist/*.whl && rm -rf /tmp/dist /tmp/lock.txt
USER kandev
WORKDIR /home/kandev
# Where the compose file mounts its volumes: a new named volume takes the
# owner of the directory it covers, so kandev can write there.
RUN mkdir var login-key login-pub
ENV KANDEV_VAR_DIR=/home/kandev/var \
    PYTHONUNBUFFERED=1

# The executor host: sshd as kandev on port 2222, nothing of ours listening.
# Agents run as kandev with sshd's login environment (not this image's ENV).
FROM base AS executor
USER root
# The package's host keys would be the same in every container of this image:
# removed; the entrypoint makes the host's own in its volume.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openssh-server \
    && rm -f /etc/ssh/ssh_host_* \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/executor/ /usr/local/lib/kandev-sshd/
USER kandev
EXPOSE 2222
CMD ["/usr/local/lib/kandev-sshd/entrypoint"]

FROM base AS web
ENV KANDEV_PROFILE=prod \
    STATIC_ROOT=/home/kandev/static
# Hashed, compressed static files are part of the image: every container of a release serves the same names.
# The prod profile will not start without its secrets; collectstatic reads none of them, so this one command
# gets placeholders that are no one's secret, on its own command line: none is an ENV, none is in the image.
# tests/test_container_stack.py runs this step as written, under this stage's ENV.
RUN SECRET_KEY=collectstatic-only-not-a-secret \
    KANDEV_SECRETS_KEY=Y29sbGVjdHN0YXRpYy1vbmx5LW5vdC1hLXNlY3JldC0= \
    ALLOWED_HOSTS=localhost \
    kandev-web collectstatic --no-input -v0
COPY deploy/web/healthcheck /usr/local/lib/kandev-web/healthcheck
# Liveness: the web process answers /healthz (deploy/web/healthcheck; curl is not in the image, Python is).
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
    CMD ["/usr/local/lib/kandev-web/healthcheck", "http://127.0.0.1:8000/healthz"]
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "kandev_web.asgi:application"]

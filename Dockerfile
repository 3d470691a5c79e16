# kandev-web as a container: the wheel inside, run as a user of its own.
# Built by deploy/compose.yaml for the web processes and the executor host.

FROM python:3.13-slim AS wheel
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.13-slim
# git for each task's worktree; Node.js for agents started with npx (the Claude ACP bridge).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git nodejs npm \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 kandev
COPY --from=wheel /dist/ /tmp/dist/
RUN pip install --no-cache-dir /tmp/dist/*.whl && rm -rf /tmp/dist
USER kandev
WORKDIR /home/kandev
ENV KANDEV_PROFILE=prod \
    KANDEV_VAR_DIR=/home/kandev/var \
    STATIC_ROOT=/home/kandev/static \
    PYTHONUNBUFFERED=1
# Hashed, compressed static files are part of the image: every container of a release serves the same names.
RUN SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost kandev-web collectstatic --no-input -v0
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "kandev_web.asgi:application"]

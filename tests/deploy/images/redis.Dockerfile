# Stand-in for Docker Hub's redis image: Debian's redis-server and redis-cli.
ARG BASE=localhost/debian:bookworm
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /tmp
CMD ["redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no"]

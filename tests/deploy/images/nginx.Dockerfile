# Stand-in for Docker Hub's nginx image (no registry is reachable in the
# tests): Debian's nginx in the foreground, logs to the container's output.
ARG BASE=localhost/debian:bookworm
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /dev/stderr /var/log/nginx/error.log \
 && ln -sf /dev/stdout /var/log/nginx/access.log
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]

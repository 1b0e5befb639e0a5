#!/usr/bin/env bash
# Fixture deploy_image: builds the images the deploy tests share, with
# dockerd of our own and a debootstrap'd Debian bookworm as the base
# (deploy/Dockerfile's BASE argument):
#   localhost/fanyi:test          deploy/Dockerfile, multi-stage from source
#   localhost/nginx:test          stand-ins for Docker Hub's nginx and redis
#   localhost/redis:test          (tests/deploy/images)
#   localhost/fanyi-systemd:test  the fanyi image + systemd + fanyi.service
# and saves the fanyi and systemd images for podman. Layers are cached in
# $FANYI_BUILD_DIR/deploy: with unchanged sources this takes seconds.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"
IMAGES="$FANYI_SOURCE_DIR/tests/deploy/images"

docker_start
t0=$SECONDS
base_image
note "base image ready ($((SECONDS - t0)) s)"

t0=$SECONDS
# The build stage gets a tag of its own so that pruning (below) keeps it
# and its cached layers; the second build reuses it.
build_image localhost/fanyi-build:test "$DEPLOY_SRC/Dockerfile" "$FANYI_SOURCE_DIR" --target build
build_image "$IMAGE" "$DEPLOY_SRC/Dockerfile" "$FANYI_SOURCE_DIR"
note "built $IMAGE ($((SECONDS - t0)) s)"
run "$DOCKER" run --rm --network=none "$IMAGE" version
expect_status 0
expect_out '^fanyi [0-9]'
# What was built is what the tree holds (the Dockerfile builds the sources).
[ "$("$DOCKER" run --rm --network=none "$IMAGE" version | head -1)" = "$("$FANYI_BIN" version | head -1)" ] &&
    ok || bad "the image's fanyi version differs from the build's"

t0=$SECONDS
build_image localhost/nginx:test "$IMAGES/nginx.Dockerfile" "$IMAGES"
build_image localhost/redis:test "$IMAGES/redis.Dockerfile" "$IMAGES"
mkdir -p "$FY_TMP/sd"
cp "$DEPLOY_SRC/systemd/fanyi.service" "$FY_TMP/sd/"
build_image localhost/fanyi-systemd:test "$IMAGES/systemd.Dockerfile" "$FY_TMP/sd" \
    --build-arg "FANYI_IMAGE=$IMAGE"
note "built the helper images ($((SECONDS - t0)) s)"

# For podman (kube play, systemd): saved again only when the image changed.
for img in "$IMAGE" localhost/fanyi-systemd:test; do
    name=${img#localhost/}
    name=${name%:test}
    id=$("$DOCKER" image inspect -f '{{.Id}}' "$img")
    if [ "$(cat "$DEPLOY_CACHE/$name.id" 2>/dev/null)" != "$id" ]; then
        "$DOCKER" save -o "$DEPLOY_CACHE/$name.tar" "$img" && echo "$id" >"$DEPLOY_CACHE/$name.id"
    fi
    [ -s "$DEPLOY_CACHE/$name.tar" ] && ok || bad "no saved $img"
done
# Earlier builds' untagged images would pile up in the cache.
"$DOCKER" image prune -f >/dev/null
finish

# The fanyi image plus systemd as PID 1 and deploy/systemd/fanyi.service
# installed as the unit file says, for tests/deploy/test_systemd.sh (booted
# by systemd-nspawn). The binary sits where the unit expects it. The image's
# static user "fanyi" goes: a user of the unit's name would be used instead
# of a dynamic one (DynamicUser=), and a host has none.
ARG FANYI_IMAGE=localhost/fanyi:test
FROM ${FANYI_IMAGE}
USER root
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd systemd-sysv \
 && rm -rf /var/lib/apt/lists/* \
 && userdel fanyi && { ! getent group fanyi >/dev/null || groupdel fanyi; } \
 && install -d /var/lib/fanyi/models /etc/fanyi \
 && systemctl mask systemd-logind.service getty.target console-getty.service \
        systemd-udevd.service systemd-udev-trigger.service systemd-resolved.service
COPY fanyi.service /etc/systemd/system/fanyi.service
RUN systemctl enable fanyi.service
HEALTHCHECK NONE
ENTRYPOINT []
STOPSIGNAL SIGRTMIN+3
CMD ["/sbin/init"]

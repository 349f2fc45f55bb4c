#!/bin/sh
# Start redis-server in the role Sentinel last agreed on. Without this a former primary
# restarted after a failover would come back as a second primary holding stale data.
# On the very first start no Sentinel knows a primary yet and FIRST_PRIMARY decides.
set -eu

me=$(cat /etc/hostname)
primary=""
for sentinel in sentinel-1 sentinel-2 sentinel-3; do
  primary=$(timeout 2 redis-cli -h "$sentinel" -p 26379 --raw \
    sentinel get-master-addr-by-name slotwise 2>/dev/null | head -n 1) || primary=""
  [ -n "$primary" ] && break
done
primary=${primary:-$FIRST_PRIMARY}

# Announce the host name, not the container address, which changes when a container is recreated.
set -- redis-server /usr/local/etc/redis/redis.conf --replica-announce-ip "$me"
if [ "$primary" = "$me" ]; then
  echo "redis-start: $me starts as the primary"
else
  echo "redis-start: $me starts as a replica of $primary"
  set -- "$@" --replicaof "$primary" 6379
fi
# The image's entrypoint owns /data for the redis user and drops root before exec.
exec docker-entrypoint.sh "$@"

#!/bin/sh
# Sentinel rewrites its own config file (the current primary after a failover, its peers), so
# the file lives in the data volume and is seeded from the template only on the first start.
set -eu
conf=/data/sentinel.conf
if [ ! -f "$conf" ]; then
  cp /usr/local/etc/redis/sentinel.conf "$conf"
  # Peers find each other by this name, which survives the container being recreated.
  echo "sentinel announce-ip $(cat /etc/hostname)" >> "$conf"
fi
# Sentinels start before the Redis nodes (which ask them for their role), but a config naming
# a host that does not resolve yet fails to load: wait until the nodes' containers exist.
for node in $REDIS_NODES; do
  until getent hosts "$node" >/dev/null; do sleep 1; done
done
# The image's entrypoint owns /data for the redis user and drops root before exec.
exec docker-entrypoint.sh redis-server "$conf" --sentinel

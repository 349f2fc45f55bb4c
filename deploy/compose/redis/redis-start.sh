#!/bin/sh
# Start redis-server in the role it should have now, so a node never comes back as a second
# primary with stale data. In order of precedence:
#   1. the primary most Sentinels name now (they start before the nodes, see compose.yaml);
#   2. the role Sentinel last gave this node, which Redis saved in /data/redis.conf
#      (Sentinel sends CONFIG REWRITE with every REPLICAOF), if no Sentinel answers;
#   3. on the very first start, FIRST_PRIMARY.
set -eu

me=$(cat /etc/hostname)
conf=/data/redis.conf

if [ -f "$conf" ]; then
  role=$(grep -E '^replicaof ' "$conf" || true)
elif [ "$me" = "$FIRST_PRIMARY" ]; then
  role=""
else
  role="replicaof $FIRST_PRIMARY 6379"
fi

ask() {
  timeout 2 redis-cli -h "$1" -p 26379 --raw sentinel get-master-addr-by-name slotwise \
    2>/dev/null | head -n 1
}
# Sentinels load their config only once both nodes' names resolve, so give them a moment.
primary=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  answers=$(for s in sentinel-1 sentinel-2 sentinel-3; do ask "$s" || true; done | grep . || true)
  # The name given by the most Sentinels (a Sentinel that was down may not know of a failover).
  primary=$(printf '%s\n' "$answers" | sort | uniq -c | sort -rn | awk 'NF == 2 { print $2; exit }')
  [ -n "$primary" ] && break
  sleep 2
done
if [ -n "$primary" ]; then
  if [ "$primary" = "$me" ]; then role=""; else role="replicaof $primary 6379"; fi
fi

# Regenerated at every start so edits to the mounted redis.conf always apply; only the role
# line carries over. The file stays writable for Sentinel's next CONFIG REWRITE.
printf 'include /usr/local/etc/redis/redis.conf\n%s\n' "$role" > "$conf"
echo "redis-start: $me starts as ${role:-the primary}"

# Announce the host name, not the container address, which changes when a container is
# recreated. The image's entrypoint owns /data for the redis user and drops root before exec.
exec docker-entrypoint.sh redis-server "$conf" --replica-announce-ip "$me"

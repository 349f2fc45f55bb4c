#!/usr/bin/env bash
# The HTTP API from any language, here curl: write a turn and wait for it, read the facts,
# search, then erase the attribute and print the attestation.
#
#   SLOTWISE_URL=http://127.0.0.1:8080 SLOTWISE_TOKEN=swt_... examples/http_client.sh user-42
set -euo pipefail
subject="${1:?usage: http_client.sh SUBJECT}"
url="${SLOTWISE_URL:-http://127.0.0.1:8080}/v1/subjects/${subject}"
auth=()
if [[ -n "${SLOTWISE_TOKEN:-}" ]]; then auth=(-H "Authorization: Bearer ${SLOTWISE_TOKEN}"); fi
call() { curl --silent --show-error --fail-with-body "${auth[@]}" "$@"; echo; }

# One observation; ?wait= returns once it is applied, with what was decided.
call -X POST "${url}/observations?wait=30" -H 'content-type: application/json' \
  -d '{"observation_id": "curl-1", "text": "I work at Globex."}'
call "${url}/facts"
call --get "${url}/search" --data-urlencode "q=where does the user work" --data-urlencode "k=3"
# Erase what was learned about the employer; the attestation says it is gone everywhere.
call -X POST "${url}/erase?wait=30" -H 'content-type: application/json' \
  -d '{"attribute": "employer", "reason": "asked by the user"}'

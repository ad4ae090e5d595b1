#!/usr/bin/env bash
set -euo pipefail
DEST=/var/backups/db
STAMP=$(date +%F)
mkdir -p "$DEST"
pg_dump --format=custom --file "$DEST/app-$STAMP.dump" "$DATABASE_URL"
# keep two weeks of dumps
find "$DEST" -name 'app-*.dump' -mtime +14 -delete
echo "backup written to $DEST/app-$STAMP.dump"

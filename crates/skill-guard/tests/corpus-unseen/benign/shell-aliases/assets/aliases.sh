alias ll='ls -alF'
alias gs='git status'
alias k='kubectl'

#!/bin/sh
# TEST TOOLING ONLY (stand-in for the official redis image): as that image, protected mode is off, so
# other containers on the compose network can connect without a password.
set -e
if [ "$1" = redis-server ]; then shift; exec redis-server --bind '* -::*' --protected-mode no "$@"; fi
exec "$@"

#!/bin/sh
# TEST TOOLING ONLY (stand-in for the official rabbitmq image): the data volume belongs to the rabbitmq
# user, and the server runs as that user as PID 1 (setpriv replaces this shell; Debian's su-based
# wrapper would stay in between and not pass SIGTERM on, so every stop would wait for the kill).
set -e
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq
if [ "$1" = rabbitmq-server ]; then
  shift
  export HOME=/var/lib/rabbitmq
  exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
fi
exec "$@"

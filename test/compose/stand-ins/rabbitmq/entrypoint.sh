#!/bin/sh
# TEST TOOLING ONLY (stand-in for the official rabbitmq image): the data volume belongs to the
# rabbitmq user; Debian's rabbitmq-server wrapper drops to that user itself.
set -e
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq
exec "$@"

#!/bin/sh
# One RabbitMQ user per vanish service, each limited to what it uses (docs/operations.md, "Broker
# users"). Run it where rabbitmqctl reaches your broker, e.g. in the broker's pod:
#   kubectl exec -i -n rabbitmq rabbitmq-0 -- env NOTES_AMQP_PASSWORD=... STATS_AMQP_PASSWORD=... \
#     MAILER_AMQP_PASSWORD=... WEBHOOKS_AMQP_PASSWORD=... [KEDA_AMQP_PASSWORD=...] VHOST=/ sh < deploy/rabbitmq/set-permissions.sh
# then put amqps://<service>:<password>@<broker>/<vhost> into each service's AMQP_URL (its own
# Secret). Running it again updates passwords and permissions. The regexes are derived from the bus
# topology (test/deploy/broker-permissions.ts; a test keeps this file equal to it) for the default
# exchange name `vanish` and the default queue names.
set -eu
: "${NOTES_AMQP_PASSWORD:?set NOTES_AMQP_PASSWORD}"
: "${STATS_AMQP_PASSWORD:?set STATS_AMQP_PASSWORD}"
: "${MAILER_AMQP_PASSWORD:?set MAILER_AMQP_PASSWORD}"
: "${WEBHOOKS_AMQP_PASSWORD:?set WEBHOOKS_AMQP_PASSWORD}"
VHOST="${VHOST:-/}"
CTL="${RABBITMQCTL:-rabbitmqctl}"

# user password configure write read topic-write topic-read (topic permissions on exchange `vanish`)
vanish_user() {
  if $CTL -q list_users | awk '{print $1}' | grep -qx "$1"; then
    printf '%s' "$2" | $CTL change_password "$1"
  else
    printf '%s' "$2" | $CTL add_user "$1"
  fi
  $CTL set_user_tags "$1"
  $CTL set_permissions -p "$VHOST" "$1" "$3" "$4" "$5"
  $CTL set_topic_permissions -p "$VHOST" "$1" vanish "$6" "$7"
}

$CTL -q list_vhosts | grep -qx "$VHOST" || $CTL add_vhost "$VHOST"
vanish_user notes "$NOTES_AMQP_PASSWORD" '^(vanish|vanish\.dlx)$' '^(vanish)$' '^$' '^(note\.created|note\.accessed|note\.failed_access|note\.expired|note\.destroyed|note\.released|request\.submitted|mail\.send|health\.notes)$' '^$'
vanish_user stats "$STATS_AMQP_PASSWORD" '^(vanish|vanish\.dlx|stats\.note-events(\.dlq|\.retry\.[0-9]+)?|stats\.heartbeats(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish\.dlx|amq\.default|stats\.note-events(\.dlq|\.retry\.[0-9]+)?|stats\.heartbeats(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish|vanish\.dlx|stats\.note-events(\.dlq|\.retry\.[0-9]+)?|stats\.heartbeats(\.dlq|\.retry\.[0-9]+)?)$' '^$' '^(note\.\*|health\.\*)$'
vanish_user mailer "$MAILER_AMQP_PASSWORD" '^(vanish|vanish\.dlx|mailer\.mail-commands(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish|vanish\.dlx|amq\.default|mailer\.mail-commands(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish|vanish\.dlx|mailer\.mail-commands(\.dlq|\.retry\.[0-9]+)?)$' '^(health\.mailer)$' '^(mail\.send)$'
vanish_user webhooks "$WEBHOOKS_AMQP_PASSWORD" '^(vanish|vanish\.dlx|webhooks\.note-events(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish\.dlx|amq\.default|webhooks\.note-events(\.dlq|\.retry\.[0-9]+)?)$' '^(vanish|vanish\.dlx|webhooks\.note-events(\.dlq|\.retry\.[0-9]+)?)$' '^$' '^(note\.accessed|note\.failed_access|note\.expired|note\.destroyed|note\.released|request\.submitted)$'

# KEDA (overlay prod-ha, the keda-rabbitmq Secret's `host`): reads the lengths of the two queues it
# scales stats and the mailer on, and nothing else (a passive queue.declare needs read permission
# only; checked on RabbitMQ 3.12). Given only when KEDA_AMQP_PASSWORD is set (users.env of
# `npm run k8s:secrets -- --overlay prod-ha` has it).
if [ -n "${KEDA_AMQP_PASSWORD:-}" ]; then
  vanish_user keda "$KEDA_AMQP_PASSWORD" '^$' '^$' '^(stats\.note-events|mailer\.mail-commands)$' '^$' '^$'
fi

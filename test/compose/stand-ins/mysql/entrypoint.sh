#!/bin/bash
# TEST TOOLING ONLY (stand-in for the official mysql image, test/compose/stand-ins/README.md).
# As the official entrypoint: on an empty data directory, initialise it, set the root password from
# MYSQL_ROOT_PASSWORD and run /docker-entrypoint-initdb.d/*.sql once; then run the server with the
# command's options. MariaDB has no utf8mb4_0900_ai_ci (MySQL 8's default): it is read as utf8mb4_unicode_ci.
set -euo pipefail
mysql8_to_mariadb() { sed 's/utf8mb4_0900_ai_ci/utf8mb4_unicode_ci/g'; }

args=()
for arg in "$@"; do
  case "$arg" in
    mysqld) ;;
    *) args+=("$(printf '%s' "$arg" | mysql8_to_mariadb)") ;;
  esac
done

chown -R mysql:mysql /var/lib/mysql /run/mysqld
if [ ! -d /var/lib/mysql/mysql ]; then
  echo "stand-in mysql: initialising /var/lib/mysql"
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
  mariadbd --user=mysql --skip-networking --socket=/run/mysqld/init.sock &
  pid=$!
  for _ in $(seq 1 60); do mariadb-admin --socket=/run/mysqld/init.sock ping >/dev/null 2>&1 && break; sleep 1; done
  {
    echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${MYSQL_ROOT_PASSWORD}';"
    echo "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    echo "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('${MYSQL_ROOT_PASSWORD}');"
  } | mariadb --socket=/run/mysqld/init.sock
  for file in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$file" ] || continue
    echo "stand-in mysql: running $file"
    mysql8_to_mariadb <"$file" | mariadb --socket=/run/mysqld/init.sock -uroot -p"${MYSQL_ROOT_PASSWORD}"
  done
  kill "$pid"; wait "$pid" || true
fi
exec mariadbd --user=mysql --bind-address=0.0.0.0 --skip-name-resolve "${args[@]}"

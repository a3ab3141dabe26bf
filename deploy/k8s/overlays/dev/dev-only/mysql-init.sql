-- DEV-ONLY (dev overlay; same as deploy/compose/mysql-init): one database and one user per service, so each service owns its data
-- (DECISIONS 10). Passwords match deploy/compose/dev-only/*.env and are published in git.
-- Runs once, when the mysql-data volume is empty.
CREATE DATABASE IF NOT EXISTS vanish_notes CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci;
CREATE DATABASE IF NOT EXISTS vanish_stats CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci;
CREATE DATABASE IF NOT EXISTS vanish_mailer CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci;
CREATE DATABASE IF NOT EXISTS vanish_webhooks CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci;
CREATE USER IF NOT EXISTS 'vanish_notes'@'%' IDENTIFIED BY 'dev-only-notes-password';
CREATE USER IF NOT EXISTS 'vanish_stats'@'%' IDENTIFIED BY 'dev-only-stats-password';
CREATE USER IF NOT EXISTS 'vanish_mailer'@'%' IDENTIFIED BY 'dev-only-mailer-password';
CREATE USER IF NOT EXISTS 'vanish_webhooks'@'%' IDENTIFIED BY 'dev-only-webhooks-password';
GRANT ALL PRIVILEGES ON vanish_notes.* TO 'vanish_notes'@'%';
GRANT ALL PRIVILEGES ON vanish_stats.* TO 'vanish_stats'@'%';
GRANT ALL PRIVILEGES ON vanish_mailer.* TO 'vanish_mailer'@'%';
GRANT ALL PRIVILEGES ON vanish_webhooks.* TO 'vanish_webhooks'@'%';
FLUSH PRIVILEGES;

-- A send's writes as ceiling C makes them (issue 16): the INSERT and the UPDATE, autocommit
--   pgbench -n -M prepared -c 8 -T 10 -R 800 -D account=<account_id> -f bench/pgbench/send_auto.sql
\set r random(1, 9000000000000000000)
INSERT INTO messages (message_id, account_id, sender, recipients, subject, template_id, status, provider, provider_message_id, attempts, last_error, created_at, updated_at)
VALUES ('msg_pg_' || :r, :account, '"Bench Academy" <hello@bench.example.com>', '["\"Bench Student\" <s@example.com>"]', 'Your place is saved', NULL, 'pending', 'resend', NULL, 0, '', now(), now());
UPDATE messages SET status = 'sent', attempts = 1, provider_message_id = 'prov-' || :r, last_error = '', updated_at = now() WHERE account_id = :account AND message_id = 'msg_pg_' || :r;

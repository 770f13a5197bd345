-- One lead, as POST /api/v1/leads writes it, into the same leads table (scenario 9):
--   pgbench -n -M prepared -c 8 -j 2 -T 10 -D account=<account_id> -f bench/pgbench/insert.sql
\set r random(1, 9000000000000000000)
INSERT INTO leads (lead_id, account_id, name, email, email_key, source, note, created_at, updated_at)
VALUES ('ld_pg_' || :r, :account, 'Bench Lead', 'pg-' || :r || '@example.com',
        'pg-' || :r || '@example.com', 'bench', 'Asked about evening classes', now(), now())
RETURNING lead_id, name, email, source, note, created_at, updated_at;

ALTER TABLE easyjob_nodes DROP COLUMN IF EXISTS leaving;

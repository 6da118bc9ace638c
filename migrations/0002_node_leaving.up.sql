-- A node that is shutting down gracefully sets leaving: peers drop it from
-- their live view at once (rebalancing its released claims) while it keeps
-- heartbeating, so its still-running jobs are not recovered under it.
ALTER TABLE easyjob_nodes ADD COLUMN IF NOT EXISTS leaving boolean NOT NULL DEFAULT false;

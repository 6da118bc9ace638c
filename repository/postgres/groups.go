package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// discoverGroups is the names CTE of GroupSummaries without a list: the
// groups with tasks, one probe of easyjob_tasks_name_bytes_idx per group
// (a skip scan, whatever a group holds), and those with node rows; its
// arguments are after, the limit, after and the limit.
const discoverGroups = `RECURSIVE tg(name, n) AS (
  SELECT (SELECT min(t.group_name) FROM easyjob_tasks t WHERE t.status <> 'removed' AND t.group_name > ?), 1
  UNION ALL
  SELECT (SELECT min(t.group_name) FROM easyjob_tasks t WHERE t.status <> 'removed' AND t.group_name > tg.name), tg.n + 1
  FROM tg WHERE tg.name IS NOT NULL AND tg.n < ?::int
),
names AS (
  SELECT name FROM tg WHERE name IS NOT NULL
  UNION
  SELECT DISTINCT group_name FROM easyjob_nodes WHERE group_name > ?
  ORDER BY 1 LIMIT ?::int
)`

// listedGroups is the names CTE of GroupSummaries with a list; its
// arguments are the names, after and the limit.
const listedGroups = `names AS (
  SELECT DISTINCT name FROM unnest(?::text[]) AS u(name) WHERE name > ? ORDER BY 1 LIMIT ?::int
)`

// groupCounts summarises each group of names: its total (the deltas of
// easyjob_task_totals), its notable tasks from their partial indexes
// (doing, paused, failing), its node rows, and the newest runs and
// failures of the spans, each read once for all groups and bounded by
// repository.GroupRunSample. Its arguments: the live window, the fires
// span, the sample bound (twice), the failures span, the bound (twice).
const groupCounts = `,
fires AS (
  SELECT e.task_id FROM easyjob_executions e
  WHERE e.started_at >= now() - (?::bigint * interval '1 microsecond')
  ORDER BY e.started_at DESC LIMIT ?::int
),
fails AS (
  SELECT e.task_id, e.started_at FROM easyjob_executions e
  WHERE e.status IN ('failed', 'timed_out', 'abandoned', 'fenced')
    AND e.started_at >= now() - (?::bigint * interval '1 microsecond')
  ORDER BY e.started_at DESC LIMIT ?::int
),
fired AS (
  SELECT t.group_name, count(*) AS n FROM fires f JOIN easyjob_tasks t ON t.id = f.task_id
  WHERE t.group_name IN (SELECT name FROM names) GROUP BY 1
),
failed AS (
  SELECT t.group_name, count(*) AS n, max(f.started_at) AS last FROM fails f JOIN easyjob_tasks t ON t.id = f.task_id
  WHERE t.group_name IN (SELECT name FROM names) GROUP BY 1
)
SELECT g.name, tt.total, tt.deltas, c.running, c.paused, c.failing, nd.nodes, nd.live,
  coalesce(fired.n, 0), (SELECT count(*) FROM fires) >= ?::int,
  coalesce(failed.n, 0), (SELECT count(*) FROM fails) >= ?::int, failed.last
FROM names g
CROSS JOIN LATERAL (
  SELECT coalesce(sum(delta), 0) AS total, count(*) AS deltas FROM easyjob_task_totals WHERE group_name = g.name
) tt
CROSS JOIN LATERAL (
  SELECT count(*) FILTER (WHERE t.status = 'doing') AS running,
    count(*) FILTER (WHERE t.status = 'paused' OR t.paused) AS paused,
    count(*) FILTER (WHERE ` + failingExpr + `) AS failing
  FROM easyjob_tasks t
  WHERE t.group_name = g.name AND t.status <> 'removed'
    AND (t.status = 'doing' OR t.status = 'paused' OR t.paused OR ` + failingExpr + `)
) c
CROSS JOIN LATERAL (
  SELECT count(*) AS nodes,
    count(*) FILTER (WHERE NOT n.leaving AND n.heartbeat_at >= now() - (?::bigint * interval '1 microsecond')) AS live
  FROM easyjob_nodes n WHERE n.group_name = g.name
) nd
LEFT JOIN fired ON fired.group_name = g.name
LEFT JOIN failed ON failed.group_name = g.name
ORDER BY g.name`

// GroupSummaries lists the groups q selects with their counts, in one
// statement; a group whose task totals piled up many delta rows has them
// folded after.
func (s *Store) GroupSummaries(ctx context.Context, q repository.GroupQuery) ([]repository.GroupSummary, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, repository.GroupLimit)
	var stmt string
	var args []any
	if len(q.Names) > 0 {
		stmt, args = `WITH `+listedGroups, []any{pgdialect.Array(q.Names), q.After, limit}
	} else {
		stmt, args = `WITH `+discoverGroups, []any{q.After, limit, q.After, limit}
	}
	sample := repository.GroupRunSample
	fireSample, failSample := sample, sample
	if q.FiresWithin <= 0 {
		fireSample = 0
	}
	if q.FailuresWithin <= 0 {
		failSample = 0
	}
	args = append(args, micros(q.FiresWithin), fireSample, micros(q.FailuresWithin), failSample,
		max(fireSample, 1), max(failSample, 1), micros(q.LiveWithin))
	rows, err := s.db.QueryContext(ctx, stmt+groupCounts, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: group summaries: %w", err)
	}
	defer rows.Close()
	var out []repository.GroupSummary
	var fold []string
	for rows.Next() {
		var g repository.GroupSummary
		var deltas int
		var last sql.NullTime
		if err := rows.Scan(&g.Group, &g.Tasks, &deltas, &g.Running, &g.Paused, &g.Failing, &g.Nodes, &g.LiveNodes,
			&g.Fires, &g.FiresCapped, &g.Failures, &g.FailuresCapped, &last); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: group summaries: %w", err)
		}
		g.LastFailure = last.Time
		if deltas > foldTotalsAfter {
			fold = append(fold, g.Group)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: group summaries: %w", err)
	}
	for _, g := range fold {
		s.foldTotals(ctx, g)
	}
	return out, nil
}

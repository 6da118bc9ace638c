// Package migrations embeds the versioned SQL files of the easy-job schema.
// Files are named NNNN_name.up.sql / NNNN_name.down.sql; the postgres store
// applies them in order under an advisory lock.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS

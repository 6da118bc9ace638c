package postgres

import (
	"context"
	"sync"

	"github.com/uptrace/bun"

	"github.com/easyjob-go/easyjob/repository"
)

// priorityConn is one connection set aside for heartbeats and the live
// view. A node whose pool is busy with its own statements (a burst of
// finishes, row locks held by a peer) must still heartbeat on time, or its
// peers would take it for dead and recover its tasks while it runs them.
type priorityConn struct {
	mu   sync.Mutex
	conn *bun.Conn // nil until first use and after an error
}

// minPoolForPriority is the smallest pool limit from which one connection
// is set aside; a smaller pool (a caller's own *sql.DB) shares everything.
const minPoolForPriority = 4

// nodes runs a node query on the set-aside connection, taking one from db
// when there is none. Any error discards the connection: the next call
// takes a fresh one.
func (p *priorityConn) nodes(ctx context.Context, db *bun.DB, q string, args ...any) ([]repository.Node, error) {
	if limit := db.DB.Stats().MaxOpenConnections; limit > 0 && limit < minPoolForPriority {
		return scanNodes(db.QueryContext(ctx, q, args...))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		p.conn = &c
	}
	nodes, err := scanNodes(p.conn.QueryContext(ctx, q, args...))
	if err != nil {
		p.closeLocked()
	}
	return nodes, err
}

// close returns the connection to the pool.
func (p *priorityConn) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked()
}

func (p *priorityConn) closeLocked() {
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
}

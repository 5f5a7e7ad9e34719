// Package accounts keeps accounts, API keys and credits: who may call the
// service, on which plan, and how many conversions they have left.
//
// One Store interface has two implementations behind Open: SQLite (the
// embedded default, one file that several processes open at once) and
// PostgreSQL (shared by every host replica). Both run the same SQL and the
// same schema migrations, applied on Open.
//
// Money rules, kept by both stores:
//
//   - Reserve deducts at once, in one transaction that holds the account's
//     row (SQLite: the database write lock), so no concurrency, process or
//     host can overspend. Commit makes the charge final; Refund gives it
//     back. Finishing a reservation twice changes nothing.
//   - Every balance change writes a ledger row, so the sum of an account's
//     ledger deltas always equals its balance.
//   - Balances reset lazily: the first Account or Reserve on or after a
//     monthly anniversary of the account's creation (UTC; the last day of
//     a month that lacks the day) sets the balance to the plan's monthly
//     credits, dated when it fell due (see Account.NextReset), and logs
//     the change.
//   - Only a SHA-256 hash of an API key is stored. A key carries 256 random
//     bits, so an unsalted fast hash is enough: there is nothing to guess.
//
// Every conversion pays for Reserve and Commit, and every request for
// Authenticate, so those are kept short: Reserve is one transaction of an
// UPDATE ... RETURNING (lock, check and deduct at once) and two INSERTs,
// Commit a single UPDATE, Authenticate a single SELECT. On PostgreSQL that is
// three round trips per conversion (pgtx.go pipelines them); on SQLite each
// connection keeps its statements compiled (sqlite_conn.go).
package accounts

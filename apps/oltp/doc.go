// Package oltp holds the two programs of Gazelle's MySQL experiment: a
// server in mysqld's shape under Gazelle's asymmetric model (a kernel
// thread per connection, scheduled on application cores distinct from the
// stack's lcores, its socket calls crossing lock-free rings to the stack
// thread that owns the connection: stack/lstack's Router, Bridge and
// Socket), and a client in benchmarksql 5.0's shape (terminals running
// TPC-C's transaction mix, one SQL statement per round trip).
//
// The server speaks the MySQL client/server protocol's command phase
// (COM_QUERY, text result sets, OK and ERR packets) and charges each
// statement the query engine's CPU time for its class (point select,
// range select, update, insert, delete, commit), from QueryCosts whose
// sources are in docs/oltp.md. It keeps no data: results are synthetic,
// since what the model predicts is where the CPU goes, and hence how much
// removing the kernel's network path can give (the article's +20%, not
// Redis's +171%).
//
// The client's response parser resumes where it stopped, so a result set
// arriving in many pieces is parsed once; the server's input grows by
// doubling and moves only when a packet was taken, so a statement of up to
// MaxPayload bytes costs linear work however it arrives. A select list
// beyond MySQL's 4096 columns is answered ER_TOO_MANY_FIELDS before any
// result set is built.
//
// Everything here is a sans-I/O poller driven with an hw.Meter: no clock,
// no goroutines, randomness only from the *rand.Rand handed in.
package oltp

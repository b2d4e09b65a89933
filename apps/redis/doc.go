// Package redis holds the two programs of Gazelle's Redis experiment as
// event loops on a stack instance's lcore (Gazelle's IO-multiplexing
// model): a RESP key-value Server and a load generator in the shape of
// redis-benchmark. They make their socket calls through the instance
// (stack/lstack), which charges them as Savanna's user-space stack or as
// the kernel's, so one scenario can compare the two as the article does.
package redis

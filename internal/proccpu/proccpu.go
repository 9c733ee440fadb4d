// Package proccpu reads what the operating system counts for a process:
// its CPU time and a finished child's peak resident memory. Benchmarks and
// tests report them; they are steadier than wall time on a shared machine.
package proccpu

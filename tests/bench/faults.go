package main

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// pageFaults returns the page faults (minor and major) of a process that
// has exited, with those of the descendants it waited for.
func pageFaults(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Minflt + ru.Majflt
}

// firstTouch measures what the first write to a page of fresh anonymous
// memory costs here: the page fault, and the page's allocation and
// zeroing, by the kernel and, in a virtual machine, by the host. A process
// start takes many such faults (an empty Go program about 150), so this
// price is a large part of what a start costs on this machine, and of
// what every page a program touches beyond the floor's adds to its ratio.
func firstTouch() (time.Duration, error) {
	const pages = 1024
	size := pages * os.Getpagesize()
	var per []time.Duration
	for range 5 {
		mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
		if err != nil {
			return 0, fmt.Errorf("mapping %d bytes: %w", size, err)
		}
		start := time.Now()
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i] = 1
		}
		per = append(per, time.Since(start)/pages)
		if err := syscall.Munmap(mem); err != nil {
			return 0, fmt.Errorf("unmapping: %w", err)
		}
	}
	slices.Sort(per)
	return per[len(per)/2], nil
}

// printFirstTouch prints firstTouch's price, for reading the fault counts
// the launch and start rows print beside their times.
func printFirstTouch() {
	d, err := firstTouch()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return
	}
	fmt.Printf("fresh memory: the first write to a page costs %.1f µs here (its fault, allocation and zeroing; 1024 pages, median of 5)\n",
		float64(d.Nanoseconds())/1000)
}

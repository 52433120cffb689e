#ifndef CLIBC_H
#define CLIBC_H
#include <stdint.h>

/// wcwidth() evaluated in a private C.UTF-8 locale (per thread), so it is right in any process locale
/// and from any thread. Returns -1 for control characters.
int clibc_wcwidth(uint32_t scalar);
/// setlocale(LC_ALL, ""), falling back to C.UTF-8 for LC_CTYPE when the result is not UTF-8; LC_NUMERIC
/// stays "C", so numbers formatted through libc have a decimal point in every locale.
void clibc_setup_utf8_locale(void);
int clibc_isatty(int fd);
/// Installs a SIGWINCH handler that chains to the previous one and writes a byte to `fd`.
int clibc_install_winch_pipe(int fd);
/// Runs `/bin/sh -c command` in the foreground process group with default signal dispositions,
/// ignoring SIGINT/SIGQUIT while waiting (as system(3) does). Returns the exit status or -1.
int clibc_run_shell(const char *command);
/// Writes all bytes to a file descriptor (retrying on EINTR).
int clibc_write_all(int fd, const char *bytes, long count);
/// The process's arguments as the C runtime passed them to constructors (glibc hands init_array
/// functions argc and argv). Swift reads CommandLine.arguments from /proc/self/cmdline on Linux, which
/// a chroot or a container without /proc does not have. Count 0 where the platform passes nothing.
int clibc_saved_argc(void);
const char *clibc_saved_argv(int index);
/// Tunes glibc's malloc for a server that builds answers of hundreds of kilobytes per request:
/// allocations up to `mmap_threshold` bytes come from the heap, and up to `trim_threshold` bytes of free
/// heap are kept rather than given back to the kernel (`top_pad` more is taken each time it grows).
/// With glibc's defaults a 200-record page (218 KB) was mmapped, faulted in page by page and unmapped
/// on every request: 75 page faults a page, more CPU than the page's own work (PERFORMANCE.md).
/// Returns 1 when all three were taken; 0 where the C library is not glibc (nothing is changed there)
/// or when glibc refused one (those before it stay set).
int clibc_keep_freed_memory(long mmap_threshold, long trim_threshold, long top_pad);
#endif

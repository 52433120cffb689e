#define _GNU_SOURCE
#include "CLibc.h"
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>
#if defined(__APPLE__)
#include <xlocale.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

extern char **environ;

int clibc_wcwidth(uint32_t scalar) {
    static __thread locale_t utf8 = (locale_t)0;
    if (utf8 == (locale_t)0) {
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
        if (utf8 == (locale_t)0) utf8 = newlocale(LC_CTYPE_MASK, "en_US.UTF-8", (locale_t)0);
    }
    if (utf8 == (locale_t)0) return scalar < 0x7f && scalar >= 0x20 ? 1 : (scalar < 0x20 ? -1 : 1);
    locale_t old = uselocale(utf8);
    int w = wcwidth((wchar_t)scalar);
    uselocale(old);
    return w;
}

void clibc_setup_utf8_locale(void) {
    setlocale(LC_ALL, "");
    // Numbers are written the same in every locale (String(cFormat:) uses vsnprintf): a decimal point.
    setlocale(LC_NUMERIC, "C");
    const char *codeset = nl_langinfo(CODESET);
    if (codeset == NULL || (strcmp(codeset, "UTF-8") != 0 && strcmp(codeset, "utf8") != 0)) {
        if (setlocale(LC_CTYPE, "C.UTF-8") == NULL) setlocale(LC_CTYPE, "en_US.UTF-8");
    }
}

int clibc_isatty(int fd) { return isatty(fd); }

static int winch_fd = -1;
static struct sigaction previous_winch;

static void winch_handler(int sig) {
    int saved = errno;
    if (previous_winch.sa_handler != SIG_DFL && previous_winch.sa_handler != SIG_IGN && previous_winch.sa_handler != NULL) {
        previous_winch.sa_handler(sig);
    }
    if (winch_fd >= 0) {
        char byte = 1;
        ssize_t ignored = write(winch_fd, &byte, 1);
        (void)ignored;
    }
    errno = saved;
}

int clibc_install_winch_pipe(int fd) {
    winch_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = winch_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(SIGWINCH, &action, &previous_winch);
}

int clibc_run_shell(const char *command) {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGWINCH, SIGPIPE, SIGTTIN, SIGTTOU};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&defaults, sigs[i]);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
    struct sigaction ignore, old_int, old_quit;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    pid_t pid;
    int status = -1;
    if (posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ) == 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    posix_spawnattr_destroy(&attr);
    return status;
}

int clibc_write_all(int fd, const char *bytes, long count) {
    while (count > 0) {
        ssize_t n = write(fd, bytes, (size_t)count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += n;
        count -= n;
    }
    return 0;
}

static int saved_argc = 0;
static char **saved_argv = 0;

#if defined(__linux__) && defined(__GLIBC__)
/* glibc calls init_array functions with (argc, argv, envp). */
static void clibc_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}
__attribute__((section(".init_array"), used)) static void (*clibc_save_arguments_entry)(int, char **, char **) = clibc_save_arguments;
#endif

int clibc_saved_argc(void) { return saved_argc; }
const char *clibc_saved_argv(int index) { return (index >= 0 && index < saved_argc && saved_argv) ? saved_argv[index] : 0; }

int clibc_keep_freed_memory(long mmap_threshold, long trim_threshold, long top_pad) {
#if defined(__GLIBC__)
    // Setting any of these turns glibc's sliding mmap threshold off, so all three are set together.
    return mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) && mallopt(M_TRIM_THRESHOLD, (int)trim_threshold)
        && mallopt(M_TOP_PAD, (int)top_pad);
#else
    (void)mmap_threshold; (void)trim_threshold; (void)top_pad;
    return 0;
#endif
}

#include "CNcursesw.h"
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <term.h>
#include <unistd.h>

WINDOW *cn_stdscr(void) { return stdscr; }
WINDOW *cn_curscr(void) { return curscr; }
int cn_lines(void) { return LINES; }
int cn_cols(void) { return COLS; }
int cn_colors(void) { return COLORS; }
int cn_color_pairs(void) { return COLOR_PAIRS; }
attr_t cn_attr_normal(void) { return A_NORMAL; }
attr_t cn_attr_reverse(void) { return A_REVERSE; }
attr_t cn_attr_bold(void) { return A_BOLD; }
attr_t cn_attr_dim(void) { return A_DIM; }
attr_t cn_attr_underline(void) { return A_UNDERLINE; }
FILE *cn_stdout(void) { return stdout; }
FILE *cn_stdin(void) { return stdin; }

int cn_put_cell(WINDOW *w, int y, int x, const wchar_t *wcs, attr_t attrs, int pair) {
    cchar_t c;
    int p = pair;
    if (setcchar(&c, wcs, attrs, (short)(p > 32767 ? 0 : p), &p) == ERR) return ERR;
    return mvwadd_wch(w, y, x, &c);
}

/* The overlay's bytes go to the screen's output file with stdio, flushed before curses writes again
   (putp would send them to stdout, whatever the screen's output is: ncurses' "putp special case"). */
static FILE *overlay_out;
static int overlay_outc(SCREEN *sp, int c) {
    (void)sp;
    return fputc(c, overlay_out);
}

int cn_put_overlay(SCREEN *sp, FILE *out, int y, int x, const char *utf8, int ncols, attr_t attrs, int pair) {
    overlay_out = out;
    char *cup = tigetstr("cup");
    if (cup == NULL || cup == (char *)-1) return ERR;
    int p = pair;
    tputs_sp(sp, tiparm(cup, y, x), 1, overlay_outc);
    vid_puts_sp(sp, attrs, (short)(p > 32767 ? 0 : p), &p, overlay_outc);
    for (int i = 0; i < ncols; i++) fputc(' ', out);   /* the stand-in's columns, in the cell's style */
    tputs_sp(sp, tiparm(cup, y, x), 1, overlay_outc);
    fputs(utf8, out);                                  /* the cluster, whole */
    vid_puts_sp(sp, A_NORMAL, 0, NULL, overlay_outc);
    tputs_sp(sp, tiparm(cup, y, x), 1, overlay_outc);
    /* Where curses believes the cursor is: (y, x). The public mvcur writes with putchar, so stdout points
       at the screen's output for the call (the same stream in the app; the file of a headless screen). */
    FILE *saved = stdout;
    stdout = out;
    int rc = mvcur_sp(sp, -1, -1, y, x);
    fflush(out);
    stdout = saved;
    return rc;
}

static struct termios saved_tty;
static int saved_fd = -1;
static char restore_sequence[256];
static size_t restore_length = 0;

void cn_crash_guard_save_tty(int fd) {
    if (tcgetattr(fd, &saved_tty) == 0) saved_fd = fd;
}

static void append_cap(const char *name) {
    char *cap = tigetstr((char *)name);
    if (cap == NULL || cap == (char *)-1) return;
    size_t n = strlen(cap);
    if (restore_length + n < sizeof restore_sequence) {
        memcpy(restore_sequence + restore_length, cap, n);
        restore_length += n;
    }
}

static void crash_handler(int sig) {
    if (restore_length > 0) {
        ssize_t ignored = write(STDOUT_FILENO, restore_sequence, restore_length);
        (void)ignored;
    }
    if (saved_fd >= 0) tcsetattr(saved_fd, TCSANOW, &saved_tty);
    signal(sig, SIG_DFL);
    raise(sig);
}

int cn_crash_guard_install(void) {
    restore_length = 0;
    append_cap("sgr0");
    append_cap("cnorm");
    append_cap("rmcup");
    append_cap("rmkx");
    int sigs[] = {SIGSEGV, SIGILL, SIGTRAP, SIGBUS, SIGABRT, SIGFPE};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = crash_handler;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        sigaction(sigs[i], &action, NULL);
    }
    return 0;
}

#ifndef CNCURSESW_H
#define CNCURSESW_H
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1   /* must be in the header: SwiftPM drops pkg-config's -D flags */
#endif
#if defined(__APPLE__)
#include <curses.h>
#else
#include <ncursesw/curses.h>
#endif
#include <stdio.h>
#include <wchar.h>

WINDOW *cn_stdscr(void);
WINDOW *cn_curscr(void);
int cn_lines(void);
int cn_cols(void);
int cn_colors(void);
int cn_color_pairs(void);
attr_t cn_attr_normal(void);
attr_t cn_attr_reverse(void);
attr_t cn_attr_bold(void);
attr_t cn_attr_dim(void);
attr_t cn_attr_underline(void);
FILE *cn_stdout(void);
FILE *cn_stdin(void);
/// Draws one cell: a spacing character plus its zero-width marks.
int cn_put_cell(WINDOW *w, int y, int x, const wchar_t *wcs, attr_t attrs, int pair);
/// Writes a grapheme cluster curses cannot hold in one cell (more than CCHARW_MAX scalars, or a
/// second spacing scalar, or a width curses would count differently) straight to the terminal, after
/// doupdate: moves to (y, x) by absolute address, blanks `ncols` columns in the cell's attributes,
/// writes the cluster's UTF-8 there and addresses the cursor again, so curses' idea of it stays true.
int cn_put_overlay(SCREEN *sp, FILE *out, int y, int x, const char *utf8, int ncols, attr_t attrs, int pair);
/// Saves the terminal state so a crash handler can restore it.
void cn_crash_guard_save_tty(int fd);
/// On SIGSEGV/ILL/TRAP/BUS/ABRT/FPE: leave the alternate screen, show the cursor, restore termios.
int cn_crash_guard_install(void);
#endif

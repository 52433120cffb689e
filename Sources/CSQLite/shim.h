// SQLite's C API, from the system's libsqlite3 (Debian: libsqlite3-dev; macOS: the SDK's).
#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on)`: sqlite3_config is variadic, which Swift cannot
/// call. Takes effect only before SQLite initializes (before the first connection opens).
static inline int csqlite_config_memory_statistics(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

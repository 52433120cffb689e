// SQLite's C API, from the system's libsqlite3 (Debian: libsqlite3-dev; macOS: the SDK's).
#include <sqlite3.h>
